package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RevokeName starts the names of the files in a file store's folder where
// `backupweb session revoke` leaves its requests for the running service:
// one file a request ("sessions.revoke.RANDOM"), holding one line, "id
// ID" (a listed session id) or "user NAME". The service applies them at
// its next poll (ApplyRevocations) and removes each file once applied.
const RevokeName = "sessions.revoke"

// RequestRevocation leaves one request (kind "id" or "user") for the
// running service in dir and returns the path of its file, which is gone
// once the service has applied it. The file appears whole (written
// beside, then renamed), mode 0600, so the service never reads half of
// it.
func RequestRevocation(dir, kind, value string) (string, error) {
	if kind != "id" && kind != "user" || value == "" || strings.ContainsAny(value, "\r\n") {
		return "", errors.New("session: a revocation names one id or one user")
	}
	f, err := os.CreateTemp(dir, "."+RevokeName+".*")
	if err != nil {
		return "", fmt.Errorf("session: %w", err)
	}
	tmp := f.Name()
	_, err = fmt.Fprintf(f, "%s %s\n", kind, value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	path := filepath.Join(dir, RevokeName+"."+strings.TrimPrefix(filepath.Base(tmp), "."+RevokeName+"."))
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("session: writing the request %s: %w", path, err)
	}
	return path, nil
}

// pendingRevocations returns the request files in dir and their lines.
func pendingRevocations(dir string) (files, lines []string, err error) {
	files, err = filepath.Glob(filepath.Join(dir, RevokeName+".*"))
	if err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, fmt.Errorf("session: reading %s: %w", f, err)
		}
		for line := range strings.Lines(string(b)) {
			lines = append(lines, strings.TrimRight(line, "\r\n"))
		}
	}
	return files, lines, nil
}

// ApplyRevocations ends the sessions that `backupweb session revoke` asked
// a file store's service to end, and returns how many ended. A store that
// is not a file store has nothing to take (the command ends sessions in a
// shared store itself).
func (m *Manager) ApplyRevocations(ctx context.Context) (int, error) {
	fs, ok := m.store.(*FileStore)
	if !ok {
		return 0, nil
	}
	files, lines, err := pendingRevocations(filepath.Dir(fs.path))
	if err != nil || len(files) == 0 {
		return 0, err
	}
	fs.mu.RLock()
	keys := make([]string, 0, len(fs.t.recs))
	for k := range fs.t.recs {
		keys = append(keys, k)
	}
	fs.mu.RUnlock()
	n := 0
	for _, line := range lines {
		kind, value, _ := strings.Cut(line, " ")
		switch kind {
		case "user":
			c, err := fs.DeleteUser(ctx, value)
			if err != nil {
				return n, err
			}
			n += c
		case "id":
			if len(value) != IDLen {
				continue
			}
			for _, k := range keys {
				if strings.HasPrefix(k, value) {
					if err := fs.Delete(ctx, k); err != nil {
						return n, err
					}
					n++
				}
			}
		}
	}
	if n > 0 {
		m.ended(ctx, "revoked", n)
	}
	// Applied: `session revoke` waits for its file to go.
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			return n, fmt.Errorf("session: %w", err)
		}
	}
	return n, nil
}
