package login

import (
	"context"
	"errors"

	"github.com/backupweb/backupweb/internal/filewatch"
	"github.com/backupweb/backupweb/internal/password"
)

// Reload reads the user file again and switches to the users it defines;
// the program calls it on SIGHUP, and the poller when the file changes. An
// edit never grants access the new file does not grant:
//
//   - a good file replaces the users;
//   - a well-formed file with no users is taken as it is: nobody can log
//     in, every session ends, and an error is logged;
//   - a file with problems (or one that cannot be read) keeps only the
//     users whose line is unchanged in it; removed users and users whose
//     line changed are refused until the file is good again. The problems
//     (file and line, never content) are logged when the file breaks, and
//     one line says when it is good again.
//
// Sessions of users who were removed or whose password changed end, and
// every throttling block is lifted and every count forgotten (logged with
// how many blocks). The error
// returned is the file's problem, if any.
func (p *Provider) Reload() error {
	// An operator's SIGHUP also lets locked-out clients, users and
	// devices in: every block is lifted and every count forgotten.
	nAddr, errAddr := p.byAddr.Clear(context.Background())
	nUser, errUser := p.byUser.Clear(context.Background())
	nDev, errDev := p.byDevice.Clear(context.Background())
	if err := errors.Join(errAddr, errUser, errDev); err != nil {
		p.log.Error("auth: lifting throttling blocks on reload failed", "auth_type", Name, "err", err)
	}
	p.log.Info("auth: throttling blocks lifted and counts forgotten on reload", "auth_type", Name, "blocks_cleared", nAddr+nUser+nDev)
	p.reloadMu.Lock()
	defer p.reloadMu.Unlock()
	if p.dir != nil {
		// No user file: the directory is asked at every sign-in, and
		// again for tokens from now on.
		p.dchecks.purge()
		return p.reloadState()
	}
	changed, err := p.reloadLocked()
	if err == nil && !changed {
		p.log.Info("auth: user file read again; no user changed", "auth_type", Name, "file", p.cfg.UsersFile)
	}
	return errors.Join(err, p.reloadState())
}

// reloadState reads the factors file and the tokens file again.
func (p *Provider) reloadState() error {
	var err error
	if f := p.Factors(); f != nil {
		// Its problems are logged by the store, line by line.
		err = errors.Join(err, f.Reload())
	}
	if p.files != nil {
		err = errors.Join(err, p.files.TokensFile().Reload())
	}
	return err
}

// reloadLocked does the work of Reload and reports whether the users
// changed. p.reloadMu must be held.
func (p *Provider) reloadLocked() (changed bool, err error) {
	rd, err := readUsers(p.cfg.UsersFile, p.cfg.UseBcrypt)
	// Remember what was read, good or bad, so the poller waits for the
	// next change instead of reading a broken file over and over.
	p.last.stamp, p.last.racy = rd.stamp, rd.racy
	prev := p.users.Load()
	var next *userSet
	switch {
	case err == nil:
		if rd.digest == p.last.digest && !p.broken {
			return false, nil
		}
		next = rd.set
		if p.broken {
			p.log.Info("auth: the user file is good again", "auth_type", Name, "file", p.cfg.UsersFile, "users", len(next.hashes))
		}
		p.broken = false
		p.last.digest = rd.digest
	case rd.empty:
		next = &userSet{hashes: map[string]string{}, decoyCost: prev.decoyCost}
		p.log.Error("auth: the user file lists no users; nobody can log in until users are added", "auth_type", Name, "file", p.cfg.UsersFile)
		p.broken = false
		p.last.digest = [32]byte{}
		err = nil // a valid file, if a locked one
	default:
		next = keepUnchanged(prev, rd.good)
		p.log.Error("auth: the user file cannot be used as it is; only users whose line is unchanged can log in until it is fixed", "auth_type", Name, "file", p.cfg.UsersFile, "users_kept", len(next.hashes), "err", err)
		p.broken = true
		p.last.digest = [32]byte{}
	}
	p.users.Store(next.bind(p.Manager().Fingerprint, p.Manager().PreviousFingerprint))
	if p.cfg.UseBcrypt && len(next.hashes) > 0 {
		// Memoised for the process: the first login for an unknown name
		// must not be the one that pays for it.
		password.DecoyHash(next.decoyCost)
	}
	ended := endedUsers(prev, next)
	for _, name := range ended {
		if derr := p.Manager().DeleteUser(context.Background(), name); derr != nil {
			p.log.Error("auth: ending the sessions of a removed or changed user failed; they are refused at their next request", "auth_type", Name, "user", name, "err", derr)
		}
	}
	if err == nil {
		p.log.Info("auth: user file reloaded", "auth_type", Name, "file", p.cfg.UsersFile,
			"users", len(next.hashes), "sessions_ended_for", ended)
	}
	return true, err
}

// poll reloads the user file when stat says it changed, or when the last
// reading was too close to the file's modification time to trust stat.
func (p *Provider) poll() {
	if p.dir != nil {
		return // no user file
	}
	st, _ := filewatch.Stat(p.cfg.UsersFile) // a missing file is the zero stamp
	p.reloadMu.Lock()
	defer p.reloadMu.Unlock()
	if st.Same(p.last.stamp) && !p.last.racy {
		return
	}
	p.reloadLocked()
	if p.onPoll != nil {
		p.onPoll()
	}
}

// Watch checks the user file for changes every Config.PollInterval and
// reloads it when it changed, until ctx ends (auth.Watcher: the program
// runs it, beside its SIGHUP loop). A negative PollInterval: it returns at
// once.
func (p *Provider) Watch(ctx context.Context) {
	p.PollRevocations() // requests left while the service was not running
	filewatch.Every(ctx, p.cfg.PollInterval, func() {
		p.poll()
		if f := p.Factors(); f != nil {
			f.Poll()
		}
		if p.files != nil {
			p.files.TokensFile().Poll()
		}
		p.PollRevocations()
	})
	if p.files != nil {
		p.files.TokensFile().Flush()
	}
}
