package app

import (
	"errors"
	"net/url"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/internal/passkey"
)

// checkPasskeys checks, for a type with a second factor (Type.SecondFactor:
// flask-login) when second_factor is optional or required, what passkeys
// need: without [server] public_url they are not offered (a warning: TOTP
// and recovery codes still work) and passkey_login is an error; with it,
// its host must be able to be a relying-party id (a host name, not an IP
// address). It reads the keys as the login type does.
func checkPasskeys(cfg *config.Config) {
	if cfg.Report.HasErrorsAt("server", "public_url") {
		return // said already, at the key itself
	}
	CheckPasskeys(cfg.Auth, cfg.Server.PublicURL, "[server] public_url")
}

// CheckPasskeys is checkPasskeys for the [authentication] section s and
// the service's public URL (nil when unset), recording its problems in s's
// report; setting names where the URL is set, for the messages. The root
// package runs it with its caller's options.
func CheckPasskeys(s *ini.Section, publicURL *url.URL, setting string) {
	key := "second_factor"
	if v, ok := s.Lookup(key); !ok || !passkeysOn(v) {
		return
	}
	if publicURL == nil {
		if s.Bool("passkey_login", false) {
			s.Errorf("passkey_login", "passkeys need %s, the https address users reach the service at (https://backups.example.com)", setting)
		} else {
			s.Warnf(key, "passkeys are not offered without %s (the https address users reach the service at); TOTP and recovery codes work", setting)
		}
		return
	}
	// publicURL is set here, so the only error is the host's.
	var host *passkey.RPIDError
	if _, err := passkey.RPID(publicURL); errors.As(err, &host) {
		s.Errorf(key, "%s", host.Problem())
	}
}

// passkeysOn reports whether a second_factor value turns passkeys on
// (optional or required); the loader records a value it cannot read.
func passkeysOn(v string) bool {
	sf, err := login.ParseSecondFactor(v)
	return err == nil && sf != login.SecondFactorOff
}
