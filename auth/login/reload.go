package login

import (
	"context"
	"time"

	"github.com/backupweb/backupweb/password"
)

// Reload reads the user file again and, when it is good, switches to the
// users it defines; the program calls it on SIGHUP, and the poller when the
// file changes. A user file with problems changes nothing: the last good
// users stay, and the problems (file and line, never content) are logged
// and returned. Sessions of users who were removed or whose password
// changed are ended.
func (p *Provider) Reload() error {
	p.reloadMu.Lock()
	defer p.reloadMu.Unlock()
	changed, err := p.reloadLocked()
	if err == nil && !changed {
		p.log.Info("auth: user file read again; no user changed", "auth_type", Name, "file", p.cfg.UsersFile)
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
	if err != nil {
		p.log.Error("auth: the user file cannot be used; keeping the previous users", "auth_type", Name, "err", err)
		return false, err
	}
	if rd.digest == p.last.digest {
		return false, nil
	}
	prev := p.users.Load()
	p.last.digest = rd.digest
	p.users.Store(rd.set)
	if p.cfg.UseBcrypt {
		// Memoised for the process: the first login for an unknown name
		// must not be the one that pays for it.
		password.DecoyHash(rd.set.decoyCost)
	}
	ended := endedUsers(prev, rd.set)
	for _, name := range ended {
		if err := p.mgr.DeleteUser(context.Background(), name); err != nil {
			p.log.Error("auth: ending the sessions of a removed or changed user failed; they end at their next request", "auth_type", Name, "user", name, "err", err)
		}
	}
	p.log.Info("auth: user file reloaded", "auth_type", Name, "file", p.cfg.UsersFile,
		"users", len(rd.set.hashes), "sessions_ended_for", ended)
	return true, nil
}

// poll reloads the user file when stat says it changed, or when the last
// reading was too close to the file's modification time to trust stat.
func (p *Provider) poll() {
	st, _ := statUsers(p.cfg.UsersFile) // a missing file is a zero stamp
	p.reloadMu.Lock()
	defer p.reloadMu.Unlock()
	if st.same(p.last.stamp) && !p.last.racy {
		return
	}
	p.reloadLocked()
	if p.onPoll != nil {
		p.onPoll()
	}
}

// watch polls the user file every interval until Close.
func (p *Provider) watch(interval time.Duration) {
	defer close(p.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.poll()
		}
	}
}
