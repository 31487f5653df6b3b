package login

import (
	"context"
	"net/http"

	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/refusal"
)

// stepHost hands the second-factor step what stays with the provider:
// its users, failure limits, sign-in page, device cookie and password
// check.
type stepHost struct{ p *Provider }

var (
	_ secondfactor.Users     = stepHost{}
	_ secondfactor.Attempts  = stepHost{}
	_ secondfactor.Pages     = stepHost{}
	_ secondfactor.Devices   = stepHost{}
	_ secondfactor.Passwords = stepHost{}
)

// Admits reports whether cred is still user's credential fingerprint.
func (h stepHost) Admits(user, cred string) bool { return h.p.users.Load().admits(user, cred) }

// Cred returns user's credential fingerprint.
func (h stepHost) Cred(user string) (string, bool) { return h.p.users.Load().cred(user) }

// Count runs check as one attempt of user counted against the limits of
// the address and of the name or device, or of the address alone when
// user is "".
func (h stepHost) Count(r *http.Request, user string, check func(context.Context) (bool, error)) (bool, error) {
	limits := []limit{h.p.addrLimit(r)}
	if user != "" {
		limits = h.p.limitsFor(r, user)
	}
	_, ok, err := countAttempt(h.p, r, limits, user, func(ctx context.Context) (struct{}, bool, error) {
		ok, err := check(ctx)
		return struct{}{}, ok, err
	})
	return ok, err
}

// Forget forgets the failures of user's name or device.
func (h stepHost) Forget(r *http.Request, user string) { h.p.forgetFailures(r, h.p.limitsFor(r, user)) }

// AdmitAddr returns the refusal of a client address blocked for its
// failures.
func (h stepHost) AdmitAddr(r *http.Request) error {
	addr := h.p.addrLimit(r)
	v, err := addr.c.Check(r.Context(), addr.key)
	if err != nil {
		return err
	}
	return passwordauth.Admit(h.p.audit, r, Name, v, addr.label, "")
}

// Login writes the sign-in page with rp.
func (h stepHost) Login(w http.ResponseWriter, r *http.Request, rp refusal.Reply, user, next string) {
	h.p.render(w, r, rp, user, next)
}

// ReplyTo answers err as the sign-in page does.
func (h stepHost) ReplyTo(w http.ResponseWriter, r *http.Request, err error, msg string) (refusal.Reply, bool) {
	return h.p.replyTo(w, r, err, msg)
}

// Issue sets a fresh device cookie for user.
func (h stepHost) Issue(w http.ResponseWriter, r *http.Request, user string) {
	h.p.issueDevice(w, r, user)
}

// Check reports whether pw is user's password, the directory spelling
// the name as the session does.
func (h stepHost) Check(ctx context.Context, user, pw string) (bool, error) {
	v, ok, err := h.p.check(ctx, user, pw)
	return ok && v.name == user, err
}
