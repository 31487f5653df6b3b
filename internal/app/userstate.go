package app

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/secretkey"
	"github.com/backupweb/backupweb/internal/tokens"
	"github.com/backupweb/backupweb/internal/userstate"
)

// UserState is where a configuration keeps its users' second factors and
// machine tokens, opened for a command: the factors file and the tokens
// file (store = file), or the Redis every instance shares (store =
// redis), exactly as serve reads them.
type UserState struct {
	// Store is the state.
	Store userstate.Store
	// Keys seal TOTP secrets and hash recovery codes (from
	// BACKUP_SECRET_KEY).
	Keys *factors.Keys
	// Login is the flask-login configuration, its defaults applied: the
	// user file is Login.UsersFile.
	Login login.Config
	// Where says where the state is, for messages: "redis" or the
	// factors file's and the tokens file's paths.
	Where string
	// Files is the file store (nil with Redis).
	Files *userstate.FileStore

	close func()
}

// Close closes the connection to Redis, if any.
func (u *UserState) Close() {
	if u.close != nil {
		u.close()
	}
}

// OpenUserState opens the user state of the configuration at path
// (type flask-login), with the secret key from lookupEnv. Problems of the
// configuration are an error naming the first; log receives the Redis
// client's outage lines.
func OpenUserState(path string, lookupEnv func(string) (string, bool), log *slog.Logger) (*UserState, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	cfg := config.Load(path, lookupEnv)
	if err := cfg.Report.Err(); err != nil {
		return nil, err
	}
	if typ := cfg.Auth.String("type", ""); typ != login.Name {
		return nil, fmt.Errorf("%s: [authentication] type is %q; second factors and tokens belong to type %s", path, typ, login.Name)
	}
	lc, ok := loadLogin(cfg.Auth, &loadEnv{stateDir: cfg.Server.StateDir, ldap: cfg.File.Section(LDAPSection)})
	if err := cfg.Report.Err(); err != nil || !ok {
		return nil, errors.Join(err, fmt.Errorf("%s: the [authentication] section cannot be used", path))
	}
	lc = lc.WithDefaults()
	// The files as the service finds them: in state_dir, or still at
	// their old place beside the user file until the service moves them.
	if sf := StateFilesOf(cfg); sf.UsersFile != "" {
		lc.FactorsFile, lc.TokensFile = sf.Factors.InForce(), sf.Tokens.InForce()
	}
	secret, set := lookupEnv(SecretEnv)
	if !set || len(secret) < MinSecretLen {
		return nil, fmt.Errorf("%s must be set to the service's secret key (at least %d characters)", SecretEnv, MinSecretLen)
	}
	previous, _ := lookupEnv(PreviousEnv)
	keys, err := factors.NewKeyring(secretkey.Keys{Current: []byte(secret), Previous: []byte(previous)})
	if err != nil {
		return nil, err
	}
	u := &UserState{Keys: keys, Login: lc}
	if cfg.Server.Store == config.StoreRedis {
		rk, err := userstate.NewRecordKeys([]byte(secret), []byte(previous))
		if err != nil {
			return nil, err
		}
		rc, err := redisstore.Open(cfg.Redis, log)
		if err != nil {
			return nil, err
		}
		u.Store, u.Where, u.close = rc.UserState(rk, keys, nil), "redis", func() { rc.Close() }
		return u, nil
	}
	quiet := slog.New(slog.DiscardHandler)
	u.Files = userstate.NewFileStore(factors.Open(lc.FactorsFile, keys, quiet), tokens.Open(lc.TokensFile, quiet, nil), nil)
	u.Store, u.Where = u.Files, lc.FactorsFile+" and "+lc.TokensFile
	return u, nil
}
