package tlscert

import (
	"bytes"
	"context"
	"crypto/tls"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/certtest"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
)

func TestLoad(t *testing.T) {
	ca := certtest.NewCA(t)
	now := time.Now()
	good := ca.Valid(t, "backups.example.lan", "192.168.1.20")
	other := ca.Valid(t, "other.example.lan")
	expired := ca.Issue(t, now.Add(-48*time.Hour), now.Add(-time.Hour), "backups.example.lan")
	future := ca.Issue(t, now.Add(time.Hour), now.Add(48*time.Hour), "backups.example.lan")
	tests := []struct {
		name      string
		cert, key []byte
		want      string // "" loads
	}{
		{"a chain and its key", good.CertPEM, good.KeyPEM, ""},
		{"another pair's key", good.CertPEM, other.KeyPEM, "cannot load the pair"},
		{"expired", expired.CertPEM, expired.KeyPEM, "expired on"},
		{"not yet valid", future.CertPEM, future.KeyPEM, "not valid before"},
		{"not PEM", []byte("hello"), good.KeyPEM, "cannot load the pair"},
		{"key and certificate swapped", good.KeyPEM, good.CertPEM, "cannot load the pair"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
			certtest.WriteFile(t, certFile, tt.cert)
			certtest.WriteFile(t, keyFile, tt.key)
			pair, err := Load(certFile, keyFile, now)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want == "":
				if got := strings.Join(Hosts(pair.Leaf), ","); got != "backups.example.lan,192.168.1.20" {
					t.Errorf("hosts %q", got)
				}
				if len(pair.Certificate) != 2 {
					t.Errorf("the chain has %d certificates, want 2", len(pair.Certificate))
				}
				if !Covers(pair.Leaf, "192.168.1.20") || !Covers(pair.Leaf, "backups.example.lan") || Covers(pair.Leaf, "evil.example.lan") {
					t.Error("Covers is wrong")
				}
			case err == nil:
				t.Fatalf("loaded, want an error with %q", tt.want)
			case !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), dir):
				t.Errorf("error %q, want %q and the file's path", err, tt.want)
			case strings.Contains(err.Error(), "PRIVATE KEY"):
				t.Errorf("the error quotes the key: %q", err)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.pem"), filepath.Join(t.TempDir(), "k.pem"), now); err == nil || !strings.Contains(err.Error(), "missing.pem") {
		t.Errorf("a missing file: %v", err)
	}
}

func TestMinVersion(t *testing.T) {
	for in, want := range map[string]uint16{"": tls.VersionTLS12, "1.2": tls.VersionTLS12, "1.3": tls.VersionTLS13, "1.1": 0, "1.0": 0, "tls1.3": 0} {
		got, err := MinVersion(in)
		if got != want || (err != nil) != (want == 0) {
			t.Errorf("MinVersion(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
}

// TestFilesFollowChanges: a renewed pair is served once its files change,
// without a restart; a bad pair keeps the one in force and logs one error
// line, however often the files are looked at; SIGHUP (Reload) reads the
// pair again too.
func TestFilesFollowChanges(t *testing.T) {
	ca := certtest.NewCA(t)
	dir := t.TempDir()
	first := ca.Valid(t, "backups.example.lan")
	certFile, keyFile := first.Write(t, dir)
	var buf logtest.Buffer
	f, err := Open(certFile, keyFile, slog.New(slog.NewTextHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	serving := func() []byte { c, _ := f.GetCertificate(nil); return c.Certificate[0] }
	if !bytes.Equal(serving(), first.Cert.Raw) {
		t.Fatal("not serving the first pair")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.Watch(ctx) }()
	defer func() { cancel(); <-done }()

	second := ca.Valid(t, "backups.example.lan")
	second.Write(t, dir)
	testkit.WaitUntil(t, 20*time.Second, func() bool { return bytes.Equal(serving(), second.Cert.Raw) },
		func() string { return "the renewed pair is not served:\n" + buf.String() })

	// A bad pair: the third certificate with the second's key.
	third := ca.Valid(t, "backups.example.lan")
	certtest.WriteFile(t, certFile, third.CertPEM)
	testkit.WaitUntil(t, 20*time.Second, func() bool { return strings.Contains(buf.String(), "level=ERROR") },
		func() string { return "no error for a bad pair:\n" + buf.String() })
	for range 3 {
		f.poll() // looked at again: no new line
	}
	time.Sleep(2 * PollInterval)
	if n := strings.Count(buf.String(), "level=ERROR"); n != 1 {
		t.Errorf("%d error lines for one bad pair, want 1:\n%s", n, buf.String())
	}
	if !bytes.Equal(serving(), second.Cert.Raw) {
		t.Error("a bad pair replaced the one in force")
	}
	line := buf.String()[strings.Index(buf.String(), "level=ERROR"):]
	for _, want := range []string{"previous one is still served", certFile} {
		if !strings.Contains(line, want) {
			t.Errorf("the error line lacks %q: %s", want, line)
		}
	}

	// SIGHUP with the whole third pair in place.
	cancel()
	<-done
	certtest.WriteFile(t, keyFile, third.KeyPEM)
	if err := f.Reload(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(serving(), third.Cert.Raw) || f.Leaf() != third.Cert && !bytes.Equal(f.Leaf().Raw, third.Cert.Raw) {
		t.Error("Reload did not put the third pair in force")
	}
	// A reload of a missing key keeps it.
	os.Remove(keyFile)
	if err := f.Reload(); err == nil || !bytes.Equal(serving(), third.Cert.Raw) {
		t.Errorf("a reload without the key: %v", err)
	}
}
