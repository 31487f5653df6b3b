package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// runHealthcheck asks a running backupweb whether it is up: GET -url
// (default http://127.0.0.1:8080/healthz), exit 0 on 200 and 1 otherwise.
// It is for container HEALTHCHECKs, where images hold no curl.
func runHealthcheck(c *cli, args []string) int {
	fs := c.flagSet("healthcheck")
	url := fs.String("url", "http://127.0.0.1:8080/healthz", "URL to ask (/healthz, or /readyz for readiness)")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	if code, ok := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintln(c.stderr, "backupweb healthcheck: unexpected arguments:", fs.Args())
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(c.ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
	if err != nil {
		fmt.Fprintln(c.stderr, "backupweb healthcheck:", err)
		return exitUsage
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(c.stderr, "backupweb healthcheck:", err)
		return exitError
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(c.stderr, "backupweb healthcheck: %s: %s %s\n", *url, resp.Status, body)
		return exitError
	}
	fmt.Fprintf(c.stdout, "%s\n", body)
	return exitOK
}
