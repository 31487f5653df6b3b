package app

import (
	"log/slog"
	"path/filepath"
	"time"

	"github.com/backupweb/backupweb/internal/acmecert"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/secretkey"
)

// ACMEDir is the folder under state_dir where, with store = file, the
// ACME certificates and account key are kept.
const ACMEDir = "acme"

// checkACME checks what ACME needs beyond its keys (Check and Open): with
// store = file a state_dir that can be made and written (unless the
// type's own check did it); with store = redis the secret key that seals
// the shared records.
func checkACME(cfg *config.Config, lookupEnv func(string) (string, bool), stateChecked bool) {
	s := cfg.File.Section("server")
	if cfg.Server.Store != config.StoreRedis {
		if !stateChecked {
			if err := config.CheckStateDir(cfg.Server.StateDir); err != nil {
				s.Errorf("state_dir", "%v (acme_domains keeps its certificates there)", err)
			}
		}
		return
	}
	if _, err := secretKey(lookupEnv); err != nil {
		s.Errorf("acme_domains", "with store = redis the certificates are sealed with the secret key: %v", err)
	}
}

// openACME builds the certificate manager of [server] acme_domains: its
// cache in state_dir/acme, or with store = redis in Redis (opening the
// client when the type did not). A failure is recorded against the key.
func (a *App) openACME(lookupEnv func(string) (string, bool), renewBefore time.Duration, log *slog.Logger) {
	cfg := a.Config
	s := cfg.File.Section("server")
	ac := cfg.Server.TLS.ACME
	o := acmecert.Options{Domains: ac.Domains, Email: ac.Email, CA: ac.CA, Roots: ac.CARoots, RenewBefore: renewBefore, Log: log}
	if cfg.Server.Store == config.StoreRedis {
		if a.Shared == nil {
			shared, err := redisstore.Open(cfg.Redis, log)
			if err != nil {
				cfg.File.Section("redis").Errorf("", "%v", err)
				return
			}
			a.Shared = shared
		}
		secret, err := secretKey(lookupEnv)
		if err != nil {
			s.Errorf("acme_domains", "with store = redis the certificates are sealed with the secret key: %v", err)
			return
		}
		keys, err := secretkey.New(secret, PreviousSecret(lookupEnv))
		if err != nil {
			s.Errorf("acme_domains", "%v", err)
			return
		}
		if o.Cache, err = acmecert.NewSharedCache(a.Shared, keys, renewBefore, log); err != nil {
			s.Errorf("acme_domains", "%v", err)
			return
		}
	} else {
		c, err := acmecert.DirCache(filepath.Join(cfg.Server.StateDir, ACMEDir))
		if err != nil {
			s.Errorf("state_dir", "%v", err)
			return
		}
		o.Cache = c
	}
	a.ACME = acmecert.New(o)
}
