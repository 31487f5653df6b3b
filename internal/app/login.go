package app

import (
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/ini"
)

// loadLogin reads a login.Config from the [authentication] section and
// checks everything it names: the user file is read and every problem in
// it is recorded with the file's name and line (never a line's content),
// the replacement template is parsed, login_view is checked. Warnings are
// recorded for plain-text passwords, weak or mixed bcrypt costs, a user
// file or factors file readable by others (and, by loadSettings, an idle
// timeout longer than the lifetime). ok is false when the configuration cannot be used.
func loadLogin(s *ini.Section) (cfg login.Config, ok bool) {
	before := s.Report().ErrorCount()
	cfg = login.Config{
		UsersFile:       s.String("users_file", ""),
		LoginPath:       s.String("login_view", ""),
		UseBcrypt:       s.Bool("use_bcrypt", false),
		LoginTemplate:   s.String("login_template", ""),
		Settings:        loadSettings(s),
		Throttling:      loadThrottling(s),
		MaxUserFailures: s.Int("max_user_failures", 0, 1, 1_000_000),
		PasskeyLogin:    s.Bool("passkey_login", false),
		FactorsFile:     s.String("factors_file", ""),
		TokensFile:      s.String("tokens_file", ""),
	}
	sf, err := login.ParseSecondFactor(s.String("second_factor", ""))
	if err != nil {
		s.Errorf("second_factor", "%v", err)
	}
	cfg.SecondFactor = sf
	s.Record(cfg.Validate())
	cfg.LoginPath, _ = login.LoginPath(cfg.LoginPath)
	s.Record(cfg.ReadTemplate()...)
	if cfg.UsersFile != "" {
		read, problems := cfg.ReadUsers()
		if read {
			holds := "password hashes"
			if !cfg.UseBcrypt {
				holds = "plain-text passwords"
			}
			ini.CheckPrivate(s.Report(), cfg.UsersFile, holds)
		}
		s.Record(problems...)
	}
	factors, problems := cfg.ReadFactors()
	if factors != "" {
		ini.CheckPrivate(s.Report(), factors, "second-factor secrets")
	}
	s.Record(problems...)
	tokensFile, problems := cfg.ReadTokens()
	if tokensFile != "" {
		ini.CheckPrivate(s.Report(), tokensFile, "machine token hashes")
	}
	s.Record(problems...)
	return cfg.WithDefaults(), s.Report().ErrorCount() == before
}
