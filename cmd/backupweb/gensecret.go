package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
)

// secretBytes is the size of a generated secret key: 32 random bytes, the
// recommended size, printed as 64 hexadecimal characters.
const secretBytes = 32

func runGenSecret(c *cli, args []string) int {
	fs := c.flagSet("gen-secret")
	if code, ok := parseNoArgs(c, fs, args); !ok {
		return code
	}
	fmt.Fprintln(c.stdout, newSecret())
	return exitOK
}

// newSecret returns 32 bytes from crypto/rand as lowercase hexadecimal.
func newSecret() string {
	b := make([]byte, secretBytes)
	rand.Read(b) // never fails on supported platforms (crypto/rand panics rather than return short)
	return hex.EncodeToString(b)
}
