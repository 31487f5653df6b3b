package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/none"
	"github.com/backupweb/backupweb/internal/catalog"
)

// TestVerifiedShown: after a verification pass, the folder's page and its
// JSON give each checked backup's last result and time; a backup without
// a checksum, and one changed since, show none.
func TestVerifiedShown(t *testing.T) {
	dir := t.TempDir()
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	writeBackup(t, dir, "good.tar", "good", base)
	writeBackup(t, dir, "rotten.tar", "rotten bytes", base)
	writeBackup(t, dir, "plain.tar", "no checksum", base)
	writeBackup(t, dir, "SHA256SUMS", sum("good")+"  good.tar\n"+sum("what was written")+"  rotten.tar\n", base)
	cat := catalog.New(dir)
	defer cat.Close()
	if _, err := cat.Verify(context.Background(), "", catalog.VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
	log, _ := quietLogger()
	srv := httptest.NewServer(NewHandler(Options{Provider: none.Provider{}, Catalog: cat, Logger: log}))
	defer srv.Close()

	_, page := get(t, nil, srv.URL+"/", nil)
	for _, want := range []string{`class="verified is-ok">Verified <time`, `class="verified is-mismatch"><strong>Checksum mismatch</strong>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(page, `class="verified`); n != 2 {
		t.Errorf("%d verification marks, want 2", n)
	}
	check := func(want map[string]string) {
		t.Helper()
		_, body := get(t, nil, srv.URL+"/api/backups?path=", nil)
		var out struct {
			Backups []struct {
				Name       string `json:"name"`
				Verified   string `json:"verified"`
				VerifiedAt string `json:"verified_at"`
			} `json:"backups"`
		}
		must(t, json.Unmarshal([]byte(body), &out))
		for _, b := range out.Backups {
			if b.Verified != want[b.Name] {
				t.Errorf("%s: verified %q, want %q", b.Name, b.Verified, want[b.Name])
			}
			if (b.Verified == "") != (b.VerifiedAt == "") {
				t.Errorf("%s: verified %q at %q", b.Name, b.Verified, b.VerifiedAt)
			}
			if at, err := time.Parse(time.RFC3339, b.VerifiedAt); b.VerifiedAt != "" && (err != nil || time.Since(at) > time.Hour) {
				t.Errorf("%s: verified_at %q", b.Name, b.VerifiedAt)
			}
		}
	}
	check(map[string]string{"good.tar": "ok", "rotten.tar": "mismatch"})
	must(t, os.WriteFile(filepath.Join(dir, "good.tar"), []byte("good, rewritten"), 0o600))
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, page = get(t, nil, srv.URL+"/", nil)
		if strings.Count(page, `class="verified`) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	check(map[string]string{"rotten.tar": "mismatch"})
}
