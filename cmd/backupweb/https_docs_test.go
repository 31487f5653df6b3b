package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/certtest"
	"github.com/backupweb/backupweb/internal/testkit/porttest"
)

// unitExecReload returns the command of the packaged unit's ExecReload=,
// what `systemctl reload backupweb` runs.
func unitExecReload(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "packaging", "backupweb.service"))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "ExecReload="); ok {
			return v
		}
	}
	t.Fatal("packaging/backupweb.service has no ExecReload=")
	return ""
}

// TestDocsCertbotHook runs docs/operations.md's certbot deploy hook as
// pasted, as certbot runs it after a renewal (an executable file, with
// RENEWED_LINEAGE set), against a backupweb serving the "Certificate
// files" configuration as pasted. What is changed, and only that: the
// folders (/etc/letsencrypt/live/NAME, /etc/backupweb/tls, the state and
// backups folders) are the test's, listen and redirect_http_listen are
// free loopback ports, the group backupweb is this process's group when
// the system has no such group, and systemctl is a stand-in on PATH that
// accepts only `reload backupweb` and runs the packaged unit's
// ExecReload= with $MAINPID the serving process, as systemd would. The
// renewed pair is served, the files have the modes and group the hook
// gives, no half-written file is left, and the reload is the SIGHUP's.
func TestDocsCertbotHook(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the hook runs as root, as certbot does (install -o root)")
	}
	hook := docSnippet(t, "docs/operations.md", "### certbot", "sh")
	conf := docSnippet(t, "docs/operations.md", "### Certificate files", "ini")
	dir := t.TempDir()
	live := filepath.Join(dir, "letsencrypt", "live", "backups.example.lan")
	dest := filepath.Join(dir, "etc-backupweb-tls")
	state, backups := filepath.Join(dir, "state"), filepath.Join(dir, "backups")
	for _, d := range []string{live, dest, state, backups} {
		must(t, os.MkdirAll(d, 0o700))
	}
	group := "backupweb"
	if _, err := user.LookupGroup(group); err != nil {
		g, err := user.LookupGroupId(strconv.Itoa(os.Getgid()))
		if err != nil {
			t.Fatal(err)
		}
		group = g.Name
		if !strings.Contains(hook, "-g backupweb ") {
			t.Fatalf("the hook no longer gives the files to the group backupweb:\n%s", hook)
		}
		hook = strings.ReplaceAll(hook, "-g backupweb ", "-g "+group+" ")
	}
	if !strings.Contains(hook, "dest=/etc/backupweb/tls\n") || !strings.Contains(hook, "systemctl reload backupweb") {
		t.Fatalf("the hook no longer installs into /etc/backupweb/tls and reloads the service:\n%s", hook)
	}
	hook = strings.Replace(hook, "dest=/etc/backupweb/tls\n", "dest="+dest+"\n", 1)
	hookFile := filepath.Join(dir, "renewal-hooks", "deploy", "backupweb")
	must(t, os.MkdirAll(filepath.Dir(hookFile), 0o755))
	must(t, os.WriteFile(hookFile, []byte(hook), 0o755))

	port, err := porttest.Free()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for _, r := range [][2]string{
		{"listen = 0.0.0.0:443", "listen = " + addr},
		{"redirect_http_listen = 0.0.0.0:80", "redirect_http_listen = 127.0.0.1:0"},
		{"/etc/backupweb/tls/", dest + "/"},
		{"/var/lib/backupweb", state},
		{"/srv/backups", backups},
	} {
		if !strings.Contains(conf, r[0]) {
			t.Fatalf("the configuration no longer holds %q:\n%s", r[0], conf)
		}
		conf = strings.ReplaceAll(conf, r[0], r[1])
	}

	// The first certificate, as certbot issued it and the operator copied
	// it; backupweb serves it.
	ca := certtest.NewCA(t)
	first := ca.Valid(t, "backups.example.lan")
	first.Write(t, dest)
	_, log := serveInProcess(t, dir, conf, nil)
	served := func() []byte {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: ca.Pool(), ServerName: "backups.example.lan"})
		if err != nil {
			return nil
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Raw
	}
	if !bytes.Equal(served(), first.Cert.Raw) {
		t.Fatalf("the first certificate is not served:\n%s", log)
	}

	// systemctl: what systemd does for `systemctl reload backupweb`.
	bin := filepath.Join(dir, "bin")
	must(t, os.Mkdir(bin, 0o755))
	calls := filepath.Join(dir, "systemctl-calls")
	standIn := fmt.Sprintf("#!/bin/sh\necho \"$*\" >>%s\n[ \"$*\" = \"reload backupweb\" ] || { echo \"unexpected: systemctl $*\" >&2; exit 1; }\nMAINPID=%d\n%s\n",
		calls, os.Getpid(), unitExecReload(t))
	must(t, os.WriteFile(filepath.Join(bin, "systemctl"), []byte(standIn), 0o755))

	// The renewal: certbot writes the new pair in the lineage and runs
	// the hook.
	second := ca.Valid(t, "backups.example.lan")
	second.Write(t, live)
	reloads := strings.Count(log.String(), "reload: configuration applied")
	cmd := exec.Command(hookFile)
	cmd.Env = append(os.Environ(), "RENEWED_LINEAGE="+live, "PATH="+bin+":"+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the deploy hook failed: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(calls); string(b) != "reload backupweb\n" {
		t.Errorf("systemctl was called with %q, want one reload backupweb", b)
	}
	testkit.WaitUntil(t, 20*time.Second, func() bool { return bytes.Equal(served(), second.Cert.Raw) },
		func() string { return "the renewed certificate is not served:\n" + log.String() })
	testkit.WaitUntil(t, 20*time.Second, func() bool { return strings.Count(log.String(), "reload: configuration applied") > reloads },
		func() string { return "the hook's reload did not reach the service:\n" + log.String() })
	if strings.Contains(log.String(), "TLS certificate not reloaded") {
		t.Errorf("a half-installed pair was read:\n%s", log)
	}

	g, err := user.LookupGroup(group)
	if err != nil {
		t.Fatal(err)
	}
	gid, _ := strconv.Atoi(g.Gid)
	for _, f := range []struct {
		path string
		mode os.FileMode
	}{{dest, os.ModeDir | 0o750}, {filepath.Join(dest, "privkey.pem"), 0o640}, {filepath.Join(dest, "fullchain.pem"), 0o644}} {
		fi, err := os.Stat(f.path)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if fi.Mode() != f.mode || st.Uid != 0 || int(st.Gid) != gid {
			t.Errorf("%s: %v, owner %d:%d; want %v, root:%s", f.path, fi.Mode(), st.Uid, st.Gid, f.mode, group)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dest, "*.new"))
	if len(left) > 0 {
		t.Errorf("the hook left %v", left)
	}
}
