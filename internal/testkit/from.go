package testkit

import (
	"net"
	"net/http"
	"time"
)

// ClientFrom is Client whose connections leave from the loopback address
// ip (127.0.0.2, 127.0.0.3...), so that a server on loopback sees another
// client address, as it would for another machine, without trusting any
// forwarding header. Its connections are kept alive and reused.
func ClientFrom(ip string) *http.Client {
	c := Client()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	c.Transport = &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 16}
	return c
}
