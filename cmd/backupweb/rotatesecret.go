package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/backupweb/backupweb/internal/acmecert"
	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/secretkey"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/userfile"
)

// runRotateSecret is `backupweb rotate-secret -config F`: the step of a
// secret key rotation that puts every stored record under the current key
// (BACKUP_SECRET_KEY), after which the previous one
// (BACKUP_SECRET_KEY_PREVIOUS) can be dropped. It prints what it did per
// kind of record and fails when a store cannot be read or written. Run it
// again: it finds everything current.
func runRotateSecret(c *cli, args []string) int {
	fs := c.flagSet("rotate-secret")
	path := configFlag(fs)
	if code, ok := parseNoArgs(c, fs, args); !ok {
		return code
	}
	if err := rotateSecret(c, *path); err != nil {
		fmt.Fprintln(c.stderr, "backupweb rotate-secret:", err)
		return exitError
	}
	return exitOK
}

func rotateSecret(c *cli, path string) error {
	cfg := config.Load(path, c.lookupEnv)
	if err := cfg.Report.Err(); err != nil {
		return err
	}
	keys, err := rotationKeys(c.lookupEnv)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Minute)
	defer cancel()
	rs, closeAll, err := resealers(c, cfg, keys)
	if err != nil {
		return err
	}
	defer closeAll()
	refused := 0
	for _, r := range rs {
		counts, err := r.Reseal(ctx, keys)
		for _, n := range counts {
			printCount(c.stdout, n)
			refused += n.Refused
		}
		if err != nil {
			return err
		}
	}
	if refused > 0 {
		fmt.Fprintln(c.stderr, "records under neither key were left as they are and are refused when read (see docs/operations.md, \"Rotating the secret key\")")
	}
	return nil
}

// rotationKeys reads both keys: a rotation needs the previous one.
func rotationKeys(lookupEnv func(string) (string, bool)) (secretkey.Keys, error) {
	cur, okCur := lookupEnv(app.SecretEnv)
	prev, okPrev := lookupEnv(app.PreviousEnv)
	if !okCur || !okPrev || cur == "" || prev == "" {
		return secretkey.Keys{}, fmt.Errorf("a rotation needs both %s (the new key) and %s (the key before it), as the service has them", app.SecretEnv, app.PreviousEnv)
	}
	return secretkey.New([]byte(cur), []byte(prev))
}

// printCount writes one line of counts.
func printCount(w io.Writer, n secretkey.Count) {
	fmt.Fprintf(w, "%s: %d resealed, %d already under the current key, %d under neither key", n.Kind, n.Resealed, n.Current, n.Refused)
	if n.Stuck > 0 {
		fmt.Fprintf(w, ", %d that cannot be resealed (they hold while the previous key is held)", n.Stuck)
	}
	fmt.Fprintln(w)
}

// resealers returns every store of cfg that holds records under the
// secret key, each a secretkey.Resealer: the factors file, the sessions
// (Redis, or the file store's read-only count), and whatever the shared
// state adds (a store of user state that implements Resealer itself, the
// ACME certificates in Redis).
func resealers(c *cli, cfg *config.Config, keys secretkey.Keys) ([]secretkey.Resealer, func(), error) {
	var rs []secretkey.Resealer
	closeAll := func() {}
	var creds func(string) (string, bool)
	if cfg.Auth.String("type", "") == login.Name {
		sf := app.StateFilesOf(cfg)
		if cfg.Server.Store != config.StoreRedis && sf.Factors.Path != "" {
			rs = append(rs, factorsFile(sf.Factors.InForce()))
		}
		var err error
		if creds, err = userCredentials(sf.UsersFile, cfg.Auth.Bool("use_bcrypt", false)); err != nil {
			return nil, closeAll, err
		}
	}
	if cfg.Server.Store != config.StoreRedis {
		if cfg.Server.StateDir != "" {
			rs = append(rs, fileSessions{dir: cfg.Server.StateDir, creds: creds})
		}
		return rs, closeAll, nil
	}
	rc, err := redisstore.Open(cfg.Redis, slog.New(slog.NewTextHandler(c.stderr, nil)))
	if err != nil {
		return nil, closeAll, err
	}
	closeAll = func() { rc.Close() }
	rs = append(rs, storeSessions{kind: "sessions (redis)", store: rc.SessionStore(), creds: creds})
	if cfg.Auth.String("type", "") == login.Name {
		// The users' factors, passkey counters and tokens in Redis; its
		// Reseal takes the keys it is given.
		rs = append(rs, rc.UserState(nil, nil, nil))
	}
	if cfg.Server.TLS.ACME.On() {
		// The ACME certificates and account key; its Reseal, too, takes
		// the keys it is given.
		acmeCache, err := acmecert.NewSharedCache(rc, keys, 0, nil)
		if err != nil {
			return nil, closeAll, err
		}
		rs = append(rs, acmeCache)
	}
	return rs, closeAll, nil
}

// factorsFile reseals a factors file: TOTP secrets and recovery codes.
type factorsFile string

func (f factorsFile) Reseal(ctx context.Context, keys secretkey.Keys) ([]secretkey.Count, error) {
	if _, err := os.Stat(string(f)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	fk, err := factors.NewKeyring(keys)
	if err != nil {
		return nil, err
	}
	n, err := factors.ResealFile(ctx, string(f), fk)
	return n.Counts(), err
}

// userCredentials returns the stored value of each user of the user file
// at path: what the sessions' credential fingerprints are made from.
func userCredentials(path string, bcrypt bool) (func(string) (string, bool), error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the user file: %w", err)
	}
	defer f.Close()
	entries, err := userfile.Parse(path, f, bcrypt)
	if err != nil {
		return nil, err
	}
	hashes := make(map[string]string, len(entries))
	for _, e := range entries {
		hashes[e.Name] = e.Hash
	}
	return func(user string) (string, bool) { h, ok := hashes[user]; return h, ok }, nil
}

// storeSessions reseals the sessions of a store that lists them (Redis),
// their credential fingerprints with creds (nil: not those).
type storeSessions struct {
	kind  string
	store session.Store
	creds func(string) (string, bool)
}

func (s storeSessions) Reseal(ctx context.Context, keys secretkey.Keys) ([]secretkey.Count, error) {
	m, err := session.NewManager(session.Options{Store: s.store, Key: keys.Current, PreviousKey: keys.Previous})
	if err != nil {
		return nil, err
	}
	n, err := m.Reseal(ctx, s.creds)
	return []secretkey.Count{{Kind: s.kind, Resealed: n.Resealed, Current: n.Current, Refused: n.Refused}}, err
}

// fileSessions counts the sessions of the file store in a state folder.
// It writes nothing: the file store belongs to the running service, which
// reseals it itself when it starts with the new key and the previous one.
type fileSessions struct {
	dir   string
	creds func(string) (string, bool)
}

func (f fileSessions) Reseal(ctx context.Context, keys secretkey.Keys) ([]secretkey.Count, error) {
	recs, err := session.ReadFileSessions(f.dir, time.Now())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	copyOf := session.NewMemoryStore(time.Now)
	for k, r := range recs {
		if err := copyOf.Commit(ctx, k, r); err != nil {
			return nil, err
		}
	}
	n, err := storeSessions{store: copyOf, creds: f.creds}.Reseal(ctx, keys)
	if len(n) == 1 {
		n[0].Kind = "sessions (file store, resealed by the service at its start; counted here)"
	}
	return n, err
}
