package pebbletest

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
)

// startDNS answers DNS queries over UDP and TCP on one loopback port
// until the test ends: an A question for a name under ".test" gets
// 127.0.0.1, any other question (AAAA, CAA, TXT, another name) an empty
// answer. It is what Pebble needs to reach the program under test by a
// name no real resolver knows, and nothing more: one question per
// message, no compression in questions.
func startDNS(t testing.TB) string {
	t.Helper()
	var pc net.PacketConn
	var ln net.Listener
	for range 50 {
		var err error
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if ln, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
		pc = nil
	}
	if pc == nil {
		t.Fatal("no loopback port free for both UDP and TCP")
	}
	t.Cleanup(func() { pc.Close(); ln.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if reply := answer(buf[:n]); reply != nil {
				pc.WriteTo(reply, from)
			}
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveTCP(c)
		}
	}()
	return pc.LocalAddr().String()
}

// serveTCP answers the length-prefixed queries of one TCP connection.
func serveTCP(c net.Conn) {
	defer c.Close()
	for {
		var n [2]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return
		}
		q := make([]byte, binary.BigEndian.Uint16(n[:]))
		if _, err := io.ReadFull(c, q); err != nil {
			return
		}
		reply := answer(q)
		if reply == nil {
			return
		}
		if _, err := c.Write(binary.BigEndian.AppendUint16(nil, uint16(len(reply)))); err != nil {
			return
		}
		if _, err := c.Write(reply); err != nil {
			return
		}
	}
}

// answer is the reply to the query q, nil for a message it cannot read.
func answer(q []byte) []byte {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return nil
	}
	// The question: labels up to the zero byte, then type and class.
	i := 12
	var labels []string
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if l > 63 || i+1+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	if i+5 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i+1 : i+3])
	end := i + 5
	name := strings.ToLower(strings.Join(labels, "."))
	r := make([]byte, 0, end+16)
	r = append(r, q[0], q[1])
	r = append(r, 0x84|q[2]&0x01, 0x00) // response, authoritative, RD copied; NOERROR
	r = append(r, 0, 1)                 // one question
	ancount := uint16(0)
	if qtype == 1 && strings.HasSuffix(name, ".test") {
		ancount = 1
	}
	r = binary.BigEndian.AppendUint16(r, ancount)
	r = append(r, 0, 0, 0, 0) // no authority, no additional
	r = append(r, q[12:end]...)
	if ancount == 1 {
		r = append(r, 0xc0, 12)           // the question's name
		r = append(r, 0, 1, 0, 1)         // A, IN
		r = append(r, 0, 0, 0, 60)        // TTL
		r = append(r, 0, 4, 127, 0, 0, 1) // 127.0.0.1
	}
	return r
}
