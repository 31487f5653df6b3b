package app

import (
	"strings"

	"github.com/backupweb/backupweb/auth/login"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/passkey"
)

// checkPasskeys checks, for a type with a second factor (Type.SecondFactor:
// flask-login) when second_factor is optional or required, what passkeys
// need: without [server] public_url they are not offered (a warning: TOTP
// and recovery codes still work) and passkey_login is an error; with it,
// its host must be able to be a relying-party id (a host name, not an IP
// address). It reads the keys as the login type does.
func checkPasskeys(cfg *config.Config) {
	key := "second_factor"
	if v, ok := cfg.Auth.Lookup(key); !ok || !passkeysOn(v) {
		return
	}
	if cfg.Report.HasErrorsAt("server", "public_url") {
		return // said already, at the key itself
	}
	if cfg.Server.PublicURL == nil {
		if cfg.Auth.Bool("passkey_login", false) {
			cfg.Auth.Errorf("passkey_login", "passkeys need [server] public_url, the https address users reach the service at (https://backups.example.com)")
		} else {
			cfg.Auth.Warnf(key, "passkeys are not offered without [server] public_url (the https address users reach the service at); TOTP and recovery codes work")
		}
		return
	}
	if _, err := passkey.RPID(cfg.Server.PublicURL); err != nil {
		cfg.Auth.Errorf(key, "%v", strings.TrimPrefix(err.Error(), "passkey: "))
	}
}

// passkeysOn reports whether a second_factor value turns passkeys on
// (optional or required); the loader records a value it cannot read.
func passkeysOn(v string) bool {
	sf, err := login.ParseSecondFactor(v)
	return err == nil && sf != login.SecondFactorOff
}
