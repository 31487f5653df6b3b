package main

import (
	"strings"

	"github.com/backupweb/backupweb/auth/login"
	"github.com/backupweb/backupweb/config"
	"github.com/backupweb/backupweb/passkey"
)

// checkPasskeys records, at the [authentication] key that turns passkeys
// on, that they need [server] public_url, or a public_url whose host can
// be a relying-party id (a host name, not an IP address). It reads the
// keys as the login type does; other types have no passkeys.
func checkPasskeys(cfg *config.Config) {
	if strings.TrimSpace(cfg.Auth.String("type", "")) != login.Name {
		return
	}
	key := "passkey_login"
	if v, ok := cfg.Auth.Lookup(key); !ok || !isTrue(v) {
		return
	}
	if cfg.Report.HasErrorsAt("server", "public_url") {
		return // said already, at the key itself
	}
	if _, err := passkey.RPID(cfg.Server.PublicURL); err != nil {
		cfg.Auth.Errorf(key, "%v", strings.TrimPrefix(err.Error(), "passkey: "))
	}
}

// isTrue reads a boolean as config.Section.Bool does, without recording a
// problem (the loader records it).
func isTrue(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}
