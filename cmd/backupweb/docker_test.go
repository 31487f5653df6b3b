package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
)

// dockerfile returns what the image runs with: the environment its ENV
// lines set and the text of the built-in configuration its printf writes.
func dockerfile(t *testing.T) (env map[string]string, builtIn string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	env = map[string]string{}
	for line := range strings.Lines(string(b)) {
		if name, value, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "ENV ")), "="); ok && strings.HasPrefix(line, "ENV ") {
			env[name] = value
		}
	}
	m := regexp.MustCompile(`printf '([^']*)' >/out/backupweb\.ini`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("the Dockerfile no longer writes its configuration with printf '...' >/out/backupweb.ini")
	}
	return env, strings.ReplaceAll(m[1], `\n`, "\n")
}

// operationsDocker returns the Docker section of docs/operations.md.
func operationsDocker(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n## Docker\n")
	if i < 0 {
		t.Fatal("docs/operations.md has no Docker section")
	}
	text = text[i+1:]
	if j := strings.Index(text[3:], "\n## "); j >= 0 {
		text = text[:j+3]
	}
	return text
}

// fenced returns the blocks of text fenced as lang, in order.
func fenced(text, lang string) []string {
	var out []string
	for _, part := range strings.Split(text, "```"+lang+"\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		out = append(out, block)
	}
	return out
}

// TestImageRefusesOpenAddress runs the program with the image's
// environment (the Dockerfile's ENV lines) and its built-in configuration:
// authentication off on 0.0.0.0 is refused, by check-config and by serve
// before it listens, with the line docs/operations.md quotes; the
// configuration the docs mount starts; BACKUPWEB_ALLOW_OPEN=1 allows the
// built-in one with a warning, and outside the image (unset) it stays a
// warning.
func TestImageRefusesOpenAddress(t *testing.T) {
	imageEnv, builtIn := dockerfile(t)
	if imageEnv["BACKUPWEB_ALLOW_OPEN"] != "0" {
		t.Fatalf("the image does not set BACKUPWEB_ALLOW_OPEN=0: %v", imageEnv)
	}
	docs := operationsDocker(t)
	quoted := fenced(docs, "text")
	inis := fenced(docs, "ini")
	if len(quoted) != 1 || len(inis) != 1 {
		t.Fatalf("the Docker section should quote one refusal and show one configuration: %d, %d", len(quoted), len(inis))
	}
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	os.WriteFile(users, []byte("alice:"+testHashA+"\n"), 0o600)
	for _, d := range []string{"state", "backups"} {
		os.Mkdir(filepath.Join(dir, d), 0o700)
	}
	inContainer := func(text string) string {
		text = strings.ReplaceAll(text, "/etc/backupweb/users", users)
		text = strings.ReplaceAll(text, "= /state", "= "+filepath.Join(dir, "state"))
		return strings.ReplaceAll(text, "= /backups", "= "+filepath.Join(dir, "backups"))
	}
	builtInPath := filepath.Join(dir, "built-in.ini")
	os.WriteFile(builtInPath, []byte(inContainer(builtIn)), 0o644)
	mounted := filepath.Join(dir, "mounted.ini")
	os.WriteFile(mounted, []byte(inContainer(inis[0])), 0o644)
	key := strings.Repeat("ab", 32)
	tests := []struct {
		name, config, allow string // allow "" leaves BACKUPWEB_ALLOW_OPEN unset
		cmd                 string
		code                int
		want                string
	}{
		{"image, built-in", builtInPath, "0", "check-config", exitError, "which BACKUPWEB_ALLOW_OPEN=0 refuses"},
		{"image, built-in, serve", builtInPath, "0", "serve", exitError, "which BACKUPWEB_ALLOW_OPEN=0 refuses"},
		{"image, mounted configuration", mounted, "0", "check-config", exitOK, "configuration ok"},
		{"allowed", builtInPath, "1", "check-config", exitOK, "warning: " + builtInPath + ": authentication is off (type none) and backupweb listens on 0.0.0.0:8080"},
		{"outside the image", builtInPath, "", "check-config", exitOK, "warning: " + builtInPath + ": authentication is off"},
		{"not 0 or 1", builtInPath, "yes", "check-config", exitError, `BACKUPWEB_ALLOW_OPEN is "yes"; it must be 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"BACKUP_SECRET_KEY": key}
			if tt.allow != "" {
				env["BACKUPWEB_ALLOW_OPEN"] = tt.allow
			}
			c, stdout, stderr := testCLI(context.Background(), "", env)
			if code := c.main([]string{tt.cmd, "-config", tt.config}); code != tt.code {
				t.Fatalf("exit %d, want %d:\n%s", code, tt.code, stderr)
			}
			if out := stdout.String() + stderr.String(); !strings.Contains(out, tt.want) {
				t.Fatalf("output lacks %q:\n%s", tt.want, out)
			}
			if strings.Contains(stderr.String(), "listening") {
				t.Fatal("serve listened")
			}
			if tt.name == "image, built-in" {
				got := strings.ReplaceAll(strings.SplitN(stderr.String(), "\n", 2)[0], builtInPath, "/etc/backupweb/backupweb.ini")
				if got != strings.TrimSpace(quoted[0]) {
					t.Errorf("docs/operations.md quotes\n%s\nthe program says\n%s", strings.TrimSpace(quoted[0]), got)
				}
			}
		})
	}
}

// TestDockerDocumentedRun builds the image and runs docs/operations.md's
// commands as written, in a folder of the test (its paths, the container's
// name, port and volume made unique): the container becomes healthy and
// its /readyz answers ready. It needs a container engine (docker info);
// none runs on our CI machines, so it skips without one whatever
// BACKUPWEB_REQUIRE_TOOLS says.
func TestDockerDocumentedRun(t *testing.T) {
	if err := exec.Command("docker", "info").Run(); err != nil {
		t.Skipf("no container engine answers `docker info` (%v); skipping the image's build and run", err)
	}
	if testing.Short() {
		t.Skip("builds the image; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("the documented commands run as root (chown of the user file to the image's user)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	docs := operationsDocker(t)
	srv := t.TempDir()
	conf := filepath.Join(srv, "backupweb")
	backups := filepath.Join(srv, "backups")
	for _, d := range []string{conf, backups} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(srv, 0o755)
	if err := os.WriteFile(filepath.Join(conf, "backupweb.ini"), []byte(fenced(docs, "ini")[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(srv, "backupweb-cli")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	port := freePort(t)
	suffix := fmt.Sprintf("%d", time.Now().UnixNano())
	name, volume, image := "backupweb-test-"+suffix, "backupweb-state-"+suffix, "backupweb-test:"+suffix
	t.Cleanup(func() {
		exec.Command("docker", "rm", "-f", name).Run()
		exec.Command("docker", "volume", "rm", "-f", volume).Run()
		exec.Command("docker", "image", "rm", "-f", image).Run()
	})
	script := fenced(docs, "sh")[0]
	// In order: the container's name before the image's, which ends the
	// run line.
	for _, r := range [][2]string{
		{"}}' backupweb", "}}' " + name},
		{"--name backupweb", "--name " + name},
		{"-t backupweb .", "-t " + image + " " + root},
		{" backupweb\n", " " + image + "\n"},
		{"backupweb user add", bin + " user add"},
		{"$(backupweb gen-secret", "$(" + bin + " gen-secret"},
		{"backupweb-state", volume},
		{"/srv/backupweb", conf},
		{"/srv/backups", backups},
		{"127.0.0.1:8080:8080", fmt.Sprintf("127.0.0.1:%d:8080", port)},
	} {
		if !strings.Contains(script, r[0]) {
			t.Fatalf("the documented commands lack %q:\n%s", r[0], script)
		}
		script = strings.ReplaceAll(script, r[0], r[1])
	}
	cmd := exec.Command("sh", "-ec", script)
	cmd.Stdin = strings.NewReader("alice-pw\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the documented commands fail: %v\n%s\n%s", err, script, out)
	}
	testkit.WaitUntil(t, 90*time.Second, func() bool {
		out, _ := exec.Command("docker", "inspect", "--format", "{{.State.Health.Status}}", name).Output()
		return strings.TrimSpace(string(out)) == "healthy"
	}, func() string {
		logs, _ := exec.Command("docker", "logs", name).CombinedOutput()
		return "the container is not healthy:\n" + string(logs)
	})
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ready" {
		t.Fatalf("/readyz: %d %q", resp.StatusCode, body)
	}
}

// freePort returns a loopback TCP port free at the time of the call.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
