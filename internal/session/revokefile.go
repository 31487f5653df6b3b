package session

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// RevokeName is the file in a file store's folder where `backupweb
// session revoke` leaves its requests for the running service, one a
// line: "id ID" (a listed session id) or "user NAME". The service takes
// them at its next poll (ApplyRevocations).
const RevokeName = "sessions.revoke"

// RequestRevocation appends one request (kind "id" or "user") to the
// revocation file in dir, mode 0600.
func RequestRevocation(dir, kind, value string) error {
	if kind != "id" && kind != "user" || value == "" || strings.ContainsAny(value, "\r\n") {
		return errors.New("session: a revocation names one id or one user")
	}
	f, err := os.OpenFile(filepath.Join(dir, RevokeName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	_, err = fmt.Fprintf(f, "%s %s\n", kind, value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("session: writing %s: %w", f.Name(), err)
	}
	return nil
}

// TakenSuffix names the revocation file while the service applies it: a
// request is done once neither RevokeName nor RevokeName+TakenSuffix is
// in the folder.
const TakenSuffix = ".taken"

// takeRevocations moves the revocation file aside (so that requests
// written meanwhile go to a new one) and reads it. The caller removes the
// taken file (taken) once the requests are applied. A taken file left by
// an interrupted run is read again first.
func takeRevocations(dir string) (lines []string, taken string, err error) {
	path := filepath.Join(dir, RevokeName)
	taken = path + TakenSuffix
	if _, err := os.Stat(taken); err != nil {
		if err := os.Rename(path, taken); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, "", nil
			}
			return nil, "", fmt.Errorf("session: taking %s: %w", path, err)
		}
	}
	f, err := os.Open(taken)
	if err != nil {
		return nil, "", fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines, taken, sc.Err()
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
	lines, taken, err := takeRevocations(filepath.Dir(fs.path))
	if err != nil || taken == "" {
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
	// Applied: `session revoke` waits for this to return.
	return n, os.Remove(taken)
}
