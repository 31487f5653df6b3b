package app

import (
	"cmp"
	"path/filepath"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/fspath"
	"github.com/backupweb/backupweb/internal/ini"
)

// loadLogin reads a login.Config from the [authentication] section and
// checks everything it names: the user file is read and every problem in
// it is recorded with the file's name and line (never a line's content),
// the replacement template is parsed, login_view is checked. Warnings are
// recorded for plain-text passwords, weak or mixed bcrypt costs, a user
// file or factors file readable by others (and, by loadSettings, an idle
// timeout longer than the lifetime). ok is false when the configuration cannot be used.
//
// The factors and tokens files default to files in state_dir (stateFiles).
// One still at its old default place beside the user file is, when the
// provider is built (env.log set), moved into state_dir once, with one log
// line; a move that fails is an error. Check moves nothing: it reads and
// checks the old file, the one in force until then, and says it will move.
func loadLogin(s *ini.Section, env *loadEnv) (cfg login.Config, ok bool) {
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
	cfg.UsersFrom = readUsers(s)
	if cfg.UsersFrom == login.UsersFromDirectory {
		// The files about the users have no user file to sit beside:
		// they are in state_dir unless set.
		if env.stateDir != "" {
			cfg.FactorsFile = cmp.Or(cfg.FactorsFile, filepath.Join(env.stateDir, FactorsName))
			cfg.TokensFile = cmp.Or(cfg.TokensFile, filepath.Join(env.stateDir, TokensName))
		}
		cfg.Directory, _ = loadDirectory(s, env.ldap) // its problems are counted in the report
	}
	state := stateFiles(cfg.UsersFile, cfg.FactorsFile, cfg.TokensFile, env.stateDir)
	env.state = &state
	if state.UsersFile != "" {
		cfg.FactorsFile, cfg.TokensFile = state.Factors.Path, state.Tokens.Path
	}
	checked := cfg // what ReadFactors and ReadTokens read: the files in force
	for _, f := range []StateFile{state.Factors, state.Tokens} {
		if f.Key == "factors_file" && cfg.SecondFactor == login.SecondFactorOff {
			continue // not read, so not moved: the service touches no factors
		}
		checked = moveOrRead(s, env, f, checked)
	}
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
	factors, problems := checked.ReadFactors()
	if factors != "" {
		ini.CheckPrivate(s.Report(), factors, "second-factor secrets")
	}
	s.Record(problems...)
	tokensFile, problems := checked.ReadTokens()
	if tokensFile != "" {
		ini.CheckPrivate(s.Report(), tokensFile, "machine token hashes")
	}
	s.Record(problems...)
	return cfg.WithDefaults(), s.Report().ErrorCount() == before
}

// moveOrRead handles a file of type flask-login still at its old default
// place (f.Pending): when the provider is built, it is moved into
// state_dir and the move logged, a failure recorded as an error at f.Key;
// for Check, it stays, and checked is returned reading it there, with a
// warning that says where it goes.
func moveOrRead(s *ini.Section, env *loadEnv, f StateFile, checked login.Config) login.Config {
	if !f.Pending() {
		return checked
	}
	if env.log == nil {
		s.Warnf(f.Key, "%s is at its old default place; serve moves it to %s in state_dir when it starts", fspath.Show(f.Old), fspath.Show(f.Path))
		if f.Key == "factors_file" {
			checked.FactorsFile = f.Old
		} else {
			checked.TokensFile = f.Old
		}
		return checked
	}
	moved, left, err := f.MoveOld()
	if err != nil {
		s.Errorf(f.Key, "%v", err)
	}
	if moved {
		f.LogMove(env.log, left)
	}
	return checked
}
