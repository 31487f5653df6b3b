package userstate_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/tokens"
	"github.com/backupweb/backupweb/internal/userstate"
	"github.com/backupweb/backupweb/internal/userstate/storetest"
)

// TestFileStoreConformance runs the conformance test over the factors
// file and the tokens file, the command line's view and the service's
// sharing the files (and their locks).
func TestFileStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		dir := t.TempDir()
		keys := storetest.NewKeys(t)
		fpath, tpath := filepath.Join(dir, "users.factors"), filepath.Join(dir, "users.tokens")
		f := factors.Open(fpath, keys, slog.New(slog.DiscardHandler))
		tk := tokens.Open(tpath, nil, nil)
		return storetest.Harness{
			A:    userstate.NewFileStore(f, tk, nil),
			B:    userstate.NewFileStore(f, tk, nil),
			Keys: keys,
			Corrupt: func(t *testing.T, user string) {
				data, err := os.ReadFile(fpath)
				if err != nil {
					t.Fatal(err)
				}
				var out []string
				for _, l := range strings.Split(string(data), "\n") {
					if strings.HasPrefix(l, user+":") {
						l = l[:len(l)/2]
					}
					out = append(out, l)
				}
				if err := os.WriteFile(fpath, []byte(strings.Join(out, "\n")), 0o600); err != nil {
					t.Fatal(err)
				}
				f.Reload()
			},
		}
	})
}
