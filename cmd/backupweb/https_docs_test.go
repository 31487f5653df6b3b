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

// dockerRun is a `docker run` command line, read into its parts.
type dockerRun struct {
	name, image   string
	ports         [][2]string // host, container
	volumes       [][3]string // source, target, options
	noHealthcheck bool
}

// parseDockerRun reads the words of a docker run line (no quoting).
func parseDockerRun(t *testing.T, line string) dockerRun {
	t.Helper()
	w := strings.Fields(line)
	if len(w) < 3 || w[0] != "docker" || w[1] != "run" {
		t.Fatalf("not a docker run line: %q", line)
	}
	var r dockerRun
	for i := 2; i < len(w); i++ {
		switch arg := w[i]; arg {
		case "-d":
		case "--no-healthcheck":
			r.noHealthcheck = true
		case "--name", "-p", "-v", "--env-file":
			if i++; i == len(w) {
				t.Fatalf("%s without a value: %q", arg, line)
			}
			switch v := w[i]; arg {
			case "--name":
				r.name = v
			case "-p":
				c := strings.LastIndexByte(v, ':')
				r.ports = append(r.ports, [2]string{v[:c], v[c+1:]})
			case "-v":
				p := strings.SplitN(v+"::", ":", 4)
				r.volumes = append(r.volumes, [3]string{p[0], p[1], p[2]})
			}
		default:
			if i != len(w)-1 || strings.HasPrefix(arg, "-") {
				t.Fatalf("an option the test does not know, %q, in %q", arg, line)
			}
			r.image = arg
		}
	}
	return r
}

// mountOf returns the volume whose target holds path.
func (r dockerRun) mountOf(path string) ([3]string, bool) {
	for _, v := range r.volumes {
		if path == v[1] || strings.HasPrefix(path, strings.TrimSuffix(v[1], "/")+"/") {
			return v, true
		}
	}
	return [3]string{}, false
}

// TestDocsDockerHTTPS checks docs/operations.md's HTTPS Docker example
// against the Dockerfile and runs its configuration. No container engine
// runs here, so the commands are read, not run: the published port is
// the one listen names; every file the configuration names is under a
// volume (the certificates' and the configuration's read-only, the
// state's writable); the certificates' folder is given to the image's
// user; the HUP goes to the container the run names; the image is the one
// the Docker section builds; and the image's health check, which asks
// plain HTTP on 8080, is turned off where it would find no answer. The
// configuration, its container paths made the test's and listen a
// loopback port, passes check-config under the image's environment and
// serves HTTPS.
func TestDocsDockerHTTPS(t *testing.T) {
	conf := docSnippet(t, "docs/operations.md", "### Docker", "ini")
	script := strings.ReplaceAll(docSnippet(t, "docs/operations.md", "### Docker", "sh"), "\\\n", " ")
	imageEnv, _ := dockerfile(t)
	df, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var imageUser, healthURL string
	for line := range strings.Lines(string(df)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "USER "); ok {
			imageUser = v
		}
		if _, v, ok := strings.Cut(line, `"-url", "`); ok {
			healthURL, _, _ = strings.Cut(v, `"`)
		}
	}
	if imageUser == "" || healthURL == "" {
		t.Fatalf("the Dockerfile has no USER (%q) or no health check URL (%q)", imageUser, healthURL)
	}

	keys := map[string]string{}
	for line := range strings.Lines(conf) {
		if k, v, ok := strings.Cut(line, "="); ok {
			keys[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	_, listenPort, _ := strings.Cut(keys["listen"], ":")
	var run dockerRun
	var chown, hup []string
	for line := range strings.Lines(script) {
		line, _, _ = strings.Cut(line, "#")
		switch w := strings.Fields(line); {
		case len(w) > 1 && w[0] == "docker" && w[1] == "run":
			run = parseDockerRun(t, line)
		case len(w) > 0 && w[0] == "chown":
			chown = w
		case len(w) > 1 && w[0] == "docker" && w[1] == "kill":
			hup = w
		}
	}
	if run.image == "" {
		t.Fatalf("no docker run line:\n%s", script)
	}
	if len(run.ports) != 1 || run.ports[0][1] != listenPort || keys["tls_cert"] == "" {
		t.Errorf("the run publishes %v; the configuration listens on %s with tls_cert %q", run.ports, keys["listen"], keys["tls_cert"])
	}
	for _, k := range []string{"tls_cert", "tls_key", "state_dir", "users_file", "dir"} {
		v, ok := run.mountOf(keys[k])
		switch {
		case !ok:
			t.Errorf("%s = %s is on no volume of the run", k, keys[k])
		case k == "state_dir" && v[2] == "ro":
			t.Errorf("the state folder %s is mounted read-only", keys[k])
		case (k == "tls_cert" || k == "tls_key" || k == "users_file") && v[2] != "ro":
			t.Errorf("%s's volume %v is not read-only", k, v)
		}
	}
	tlsMount, _ := run.mountOf(keys["tls_cert"])
	if len(chown) != 4 || chown[1] != "-R" || chown[2] != imageUser || chown[3] != tlsMount[0] {
		t.Errorf("the certificates' folder %s is not given to the image's user %s: %v", tlsMount[0], imageUser, chown)
	}
	if len(hup) != 5 || strings.Join(hup[2:4], " ") != "--signal HUP" || hup[4] != run.name {
		t.Errorf("the reload does not signal the container %q: %v", run.name, hup)
	}
	if !strings.Contains(docSnippet(t, "docs/operations.md", "\n## Docker\n", "sh"), "-t "+run.image+" .") {
		t.Errorf("the run's image %q is not the one the Docker section builds", run.image)
	}
	if !strings.HasPrefix(healthURL, "http://127.0.0.1:"+listenPort+"/") && !run.noHealthcheck {
		t.Errorf("the image's health check asks %s, which listen = %s with TLS does not answer, and the run keeps it", healthURL, keys["listen"])
	}

	// The configuration, in the test's folders.
	dir := t.TempDir()
	ca := certtest.NewCA(t)
	tlsDir := filepath.Join(dir, "tls")
	must(t, os.Mkdir(tlsDir, 0o700))
	ca.Valid(t, "backups.example.lan").Write(t, tlsDir)
	if filepath.Base(keys["tls_cert"]) != "fullchain.pem" || filepath.Base(keys["tls_key"]) != "privkey.pem" {
		t.Fatalf("the example's pair is not certbot's file names: %s, %s", keys["tls_cert"], keys["tls_key"])
	}
	users := addUsers(t, dir, "alice")
	for _, d := range []string{"state", "backups"} {
		must(t, os.Mkdir(filepath.Join(dir, d), 0o700))
	}
	port, err := porttest.Free()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	local := conf
	for _, r := range [][2]string{
		{"= " + keys["listen"], "= " + addr},
		{"= " + filepath.Dir(keys["tls_cert"]) + "/", "= " + tlsDir + "/"},
		{"= " + keys["state_dir"], "= " + filepath.Join(dir, "state")},
		{"= " + keys["dir"], "= " + filepath.Join(dir, "backups")},
		{"= " + keys["users_file"], "= " + users},
	} {
		local = strings.ReplaceAll(local, r[0], r[1])
	}
	env := map[string]string{"BACKUP_SECRET_KEY": strings.Repeat("ab", 32)}
	for k, v := range imageEnv {
		env[k] = v
	}
	path := filepath.Join(dir, "backupweb.ini")
	must(t, os.WriteFile(path, []byte(local), 0o600))
	c, _, stderr := testCLI(t.Context(), "", env)
	if code := c.main([]string{"check-config", "-config", path}); code != exitOK || strings.Contains(stderr.String(), "error:") {
		t.Fatalf("check-config refuses the example under the image's environment: exit %d\n%s\n%s", code, stderr, local)
	}
	startServe(t, env, "-config", path)
	hc := httpsClient(ca, addr)
	resp, err := hc.Get(fmt.Sprintf("https://backups.example.lan:%d/healthz", port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Strict-Transport-Security") == "" {
		t.Errorf("the example's service over https: %d, HSTS %q", resp.StatusCode, resp.Header.Get("Strict-Transport-Security"))
	}
}
