// Package porttest picks loopback ports for the outside servers tests
// start (nginx, Caddy, Redis, gunicorn...).
//
// A port the kernel hands out for 127.0.0.1:0 comes from the ephemeral
// range, the same range every outgoing connection's local port comes
// from: between the moment a test learns such a port and the moment its
// server binds it, any loopback connection of another test may take it,
// and the server fails with "address already in use". Free picks a port
// below that range instead, which no outgoing connection is given, and
// checks that nothing listens on it.
package porttest

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Free returns a loopback TCP port that nothing listened on a moment ago
// and that lies outside the kernel's ephemeral port range.
func Free() (int, error) {
	lo, hi := below()
	for range 200 {
		port := lo + rand.IntN(hi-lo)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	// Fall back on the kernel's choice: a port taken under the server's
	// feet then fails the test with the server's own message.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, errors.New("no free loopback port: " + err.Error())
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// below is the range [lo, hi) Free picks from: from 20000 up to the start
// of the ephemeral range (Linux's ip_local_port_range, 32768 by default
// and elsewhere).
func below() (lo, hi int) {
	lo, hi = 20000, 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return lo, hi
	}
	if start, err := strconv.Atoi(f[0]); err == nil && start > 1024+1000 {
		hi = start
		if lo >= hi-1000 {
			lo = hi - 1000
		}
	}
	return lo, hi
}
