package secondfactor

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"
)

// Paths of the second-factor step and of the enrolment a user without a
// factor goes through when second_factor = required.
const (
	SecondFactorPath = "/_backupweb/second-factor"
	EnrolPath        = "/_backupweb/second-factor/enrol"
)

// PendingCookie is the name of the cookie that holds the half-signed-in
// state between a right password and the second factor (with the
// __Host- or __Secure- prefix like the session cookie).
const PendingCookie = "backupweb_pending"

// PendingLifetime is how long the second-factor step may take.
const PendingLifetime = 5 * time.Minute

// sealPending is the purpose pending states are sealed for
// (session.Manager.Seal), and sealEnrolment that of the secret an
// enrolment page carries.
const (
	sealPending   = "second-factor-pending"
	sealEnrolment = "second-factor-enrolment"
)

// Kinds of single-use tokens (auth.Shared.SpendOnce).
const (
	spendPending = "second-factor-pending"
	spendTOTP    = "totp-step"
)

// pending is the half-signed-in state: the password was right, the
// second factor is still to come. It is sealed (encrypted and
// authenticated under a key derived from the secret key, expiring after
// PendingLifetime) into PendingCookie, so that every instance can read it;
// its nonce is spent (auth.Shared.SpendOnce) when it completes, so it is
// used once. It grants nothing: it is not a session, and no route but the
// second-factor step and the enrolment reads it.
type pending struct {
	User string `json:"u"`
	// Cred is the credential fingerprint the password was checked against:
	// the session it leads to is made with it.
	Cred string `json:"c"`
	// Nonce identifies this state for its single use.
	Nonce string `json:"n"`
	// Bind is a hash of the browser's form cookie at the password step:
	// the state is only accepted with that cookie beside it.
	Bind string `json:"b"`
	// Enrol tells that the user has no factor and must enrol.
	Enrol bool `json:"e,omitempty"`
	// At is when the password was checked, Unix seconds: the session the
	// state leads to counts it as the password given (AttrReauth).
	At int64 `json:"t,omitempty"`
	// Groups are the directory user's groups read at the password step
	// (users = ldap), for the session the state leads to.
	Groups []string `json:"g,omitempty"`
	// Email is the directory user's e-mail address (users = ldap).
	Email string `json:"m,omitempty"`
}

// formBinding returns the hash of r's form cookie (the CSRF cookie of the
// sign-in forms), which binds a pending state to the browser.
func (s *Step) formBinding(r *http.Request) (string, bool) {
	c, err := s.cfg.Guard.Manager().Cookie(r, s.cfg.Guard.Manager().FormCookieName())
	if err != nil || c.Value == "" {
		return "", false
	}
	sum := sha256.Sum256([]byte("pending-binding\x00" + c.Value))
	return base64.RawURLEncoding.EncodeToString(sum[:]), true
}

// beginPending sets the pending state of a right password for user.
func (s *Step) beginPending(w http.ResponseWriter, r *http.Request, user, cred string, groups []string, email string, enrol bool) error {
	bind, ok := s.formBinding(r)
	if !ok {
		// CheckFormToken passed, so the cookie is there; refuse anyway.
		return errNoBinding
	}
	raw := make([]byte, 16)
	rand.Read(raw)
	st := pending{User: user, Cred: cred, Groups: groups, Email: email, Nonce: base64.RawURLEncoding.EncodeToString(raw), Bind: bind, Enrol: enrol, At: s.cfg.Now().Unix()}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	sealed, err := s.cfg.Guard.Manager().Seal(sealPending, b, PendingLifetime)
	if err != nil {
		return err
	}
	s.cfg.Guard.Manager().SetCookie(w, r, PendingCookie, sealed, PendingLifetime)
	return nil
}

// pendingOf returns r's pending state when it is sealed by us, unexpired,
// and bound to the form cookie r carries.
func (s *Step) pendingOf(r *http.Request) (pending, bool) {
	c, err := s.cfg.Guard.Manager().Cookie(r, PendingCookie)
	if err != nil {
		return pending{}, false
	}
	b, err := s.cfg.Guard.Manager().Open(sealPending, c.Value)
	if err != nil {
		return pending{}, false
	}
	var st pending
	if json.Unmarshal(b, &st) != nil || st.User == "" || st.Nonce == "" {
		return pending{}, false
	}
	bind, ok := s.formBinding(r)
	if !ok || subtle.ConstantTimeCompare([]byte(bind), []byte(st.Bind)) != 1 {
		return pending{}, false
	}
	return st, true
}

// endPending drops the pending cookie.
func (s *Step) endPending(w http.ResponseWriter, r *http.Request) {
	s.cfg.Guard.Manager().ClearCookie(w, r, PendingCookie)
}
