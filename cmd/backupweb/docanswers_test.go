package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readyQuote matches a /readyz answer the documentation quotes, which may
// run over a line break.
var readyQuote = regexp.MustCompile("`not ready:[^`]*`")

// TestDocsQuoteWhatReadyzSends compares every /readyz answer quoted in the
// README and docs/ ("not ready: …") with what the service sends: answers
// taken from a real serve (healthy; its shared store, Redis, unreachable),
// and, for the conditions no test can bring about from outside (a session
// store closed under the service, a provider without its user file), the
// words of the code that writes them. A quote ending in "…" stands for
// every answer that starts with what comes before it.
func TestDocsQuoteWhatReadyzSends(t *testing.T) {
	root := filepath.Join("..", "..")
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"))
	type quote struct{ where, text string }
	var quotes []quote
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range readyQuote.FindAllString(string(b), -1) {
			text := strings.Join(strings.Fields(strings.Trim(m, "`")), " ")
			quotes = append(quotes, quote{filepath.Base(f), text})
		}
	}
	if len(quotes) < 3 {
		t.Fatalf("found %d quoted /readyz answers: the extraction is broken", len(quotes))
	}

	sent := map[string]bool{}
	readyz := func(addr string) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sent[strings.TrimSpace(string(b))] = true
	}
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	os.WriteFile(users, []byte("alice:"+testHashA+"\n"), 0o600)
	login := fmt.Sprintf("[server]\nlisten = 127.0.0.1:0\nstate_dir = %s/state\n%%s\n[backups]\ndir = %s\n\n[authentication]\ntype = flask-login\nusers_file = %s\nuse_bcrypt = True\n", dir, dir, users)
	addr, _ := serveInProcess(t, dir, fmt.Sprintf(login, ""), nil)
	readyz(addr)
	redisDir := t.TempDir()
	addr, _ = serveInProcess(t, redisDir, fmt.Sprintf(login, fmt.Sprintf("store = redis\n\n[redis]\nurl = redis://127.0.0.1:%d/0\nconnect_timeout = 200ms\ncommand_timeout = 200ms\n", freePort(t))), nil)
	readyz(addr)
	if !sent["ready"] || !sent["not ready: the shared store does not answer"] {
		t.Fatalf("the scenarios did not give the answers they stand for: %v", sent)
	}
	for _, src := range []string{"internal/web/ready.go", "internal/auth/sessionauth/open.go", "internal/auth/login/login.go", "internal/auth/login/directory.go"} {
		b, err := os.ReadFile(filepath.Join(root, src))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?:Part: |readiness\{[a-z]+, )"([^"]+)"`).FindAllStringSubmatch(string(b), -1) {
			sent["not ready: "+m[1]] = true
		}
	}

	for _, q := range quotes {
		ok := sent[q.text]
		if prefix, cut := strings.CutSuffix(q.text, "…"); cut {
			for s := range sent {
				ok = ok || strings.HasPrefix(s, strings.TrimRight(prefix, " "))
			}
		}
		if !ok {
			t.Errorf("%s quotes /readyz answering %q, which the service never sends; it sends %v", q.where, q.text, sent)
		}
	}
}
