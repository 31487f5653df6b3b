package porttest

import (
	"net"
	"strconv"
	"testing"
)

func TestFreeIsFreeAndBelowTheEphemeralRange(t *testing.T) {
	lo, hi := below()
	if lo < 1024 || lo >= hi {
		t.Fatalf("range [%d, %d) is no range of unprivileged ports", lo, hi)
	}
	for range 20 {
		port, err := Free()
		if err != nil {
			t.Fatal(err)
		}
		if port < lo || port >= hi {
			t.Errorf("port %d lies outside [%d, %d)", port, lo, hi)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("port %d given as free: %v", port, err)
		}
		l.Close()
	}
}
