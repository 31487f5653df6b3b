package pebbletest

import (
	"context"
	"net"
	"testing"
)

// TestDNSAnswersTestNames: a name under .test resolves to 127.0.0.1 and
// nothing else; other names resolve to nothing; over UDP and TCP.
func TestDNSAnswersTestNames(t *testing.T) {
	addr := startDNS(t)
	for _, network := range []string{"udp", "tcp"} {
		t.Run(network, func(t *testing.T) { lookups(t, network, addr) })
	}
}

func lookups(t *testing.T, network, addr string) {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	got, err := r.LookupHost(context.Background(), Name("x"))
	if err != nil || len(got) != 1 || got[0] != "127.0.0.1" {
		t.Errorf("%s: %v %v", Name("x"), got, err)
	}
	if got, err := r.LookupHost(context.Background(), "example.com"); err == nil {
		t.Errorf("example.com resolved to %v", got)
	}
}
