package oauth

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/throttle"
)

// FlowTTL is how long a sign-in may take between the redirect to the
// identity provider and the return to the callback.
const FlowTTL = 10 * time.Minute

// Cookies holding sign-ins in progress are named flowCookiePrefix followed
// by the first flowCookieIDLen characters of their state, so that sign-ins
// started in several tabs do not overwrite each other.
const (
	flowCookiePrefix = "backupweb_oauth_"
	flowCookieIDLen  = 12
	// maxFlows is how many sign-ins in progress a browser may hold; older
	// ones are dropped when it starts another.
	maxFlows = 4
	// maxNext is the longest next path kept; a longer one returns to "/",
	// so that the sealed cookie always fits.
	maxNext = 1024
	// sealPurpose separates the flow's sealed cookies from any other
	// sealed value of the service.
	sealPurpose = "oauth-flow"
)

// flow is a sign-in in progress, sealed in a cookie of the browser that
// started it: only that browser can complete it.
type flow struct {
	State    string `json:"s"`
	Verifier string `json:"v"`
	Nonce    string `json:"n,omitempty"`
	Next     string `json:"r"`
}

// encode returns f as JSON. HTML characters are not escaped, so next takes
// at most twice its length (for quotes and backslashes).
func (f flow) encode() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(f) // a struct of strings always encodes
	return b.Bytes()
}

// errState marks a callback whose state is missing, unknown to this
// browser, expired, tampered with or already used.
var errState = errors.New("oauth: missing, wrong or used state")

// randomToken returns 32 random bytes as unpadded base64url.
func randomToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func flowCookieName(state string) string {
	if len(state) < flowCookieIDLen {
		return ""
	}
	return flowCookiePrefix + state[:flowCookieIDLen]
}

// login is GET /oauth/login: it starts a sign-in and sends the browser to
// the authorization endpoint with a fresh state, a PKCE challenge (S256)
// and, for OpenID Connect, a nonce. The state, PKCE verifier, nonce and
// the local path to return to travel in a sealed cookie.
//
// A browser that already holds a live session goes straight to next.
// Others are limited per client address and in total (429 with
// Retry-After past it): each sign-in begun is a state the callback spends
// and remembers.
func (p *Provider) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	next := p.Guard.SafeNext(r.URL.Query().Get("next"))
	if len(next) > maxNext {
		next = "/"
	}
	if _, ok, err := p.Guard.Identify(r); err == nil && ok {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	if ok, after := p.begins.Take(throttle.AddrKey(peer.Of(r).Addr)); !ok {
		p.errs.Error(w, r, &refusal.RateError{After: after})
		return
	}
	ep, err := p.endpoints()
	if err != nil {
		p.providerFailure(w, r, "discovery", err)
		return
	}
	f := flow{
		State:    randomToken(),
		Verifier: oauth2.GenerateVerifier(),
		Next:     next,
	}
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(f.Verifier)}
	if p.cfg.OpenIDConnect() {
		f.Nonce = randomToken()
		opts = append(opts, oauth2.SetAuthURLParam("nonce", f.Nonce))
	}
	sealed, err := p.Manager().Seal(sealPurpose, f.encode(), FlowTTL)
	if err != nil {
		p.serverError(w, r, err)
		return
	}
	p.dropOldFlows(w, r)
	p.Manager().SetCookie(w, r, flowCookieName(f.State), sealed, FlowTTL)
	http.Redirect(w, r, p.oauth2Config(ep).AuthCodeURL(f.State, opts...), http.StatusFound)
}

// dropOldFlows clears the browser's sign-ins in progress when it already
// holds maxFlows of them: abandoned tabs must not fill its cookie jar.
func (p *Provider) dropOldFlows(w http.ResponseWriter, r *http.Request) {
	var names []string
	for _, c := range r.Cookies() {
		if strings.HasPrefix(c.Name, flowCookiePrefix) {
			names = append(names, c.Name)
		}
	}
	if len(names) < maxFlows {
		return
	}
	for _, n := range names {
		p.Manager().ClearCookie(w, r, n)
	}
}

// takeFlow finds, opens and clears the sign-in that the callback's state
// names, and marks the state used. It fails with errState when the state
// is missing, when this browser holds no matching sealed cookie, when the
// cookie does not open (tampered, expired, from another key) or holds
// another state, and when the state was used before. Any other error means
// the single use could not be checked (a shared store did not answer): the
// sign-in is not completed.
func (p *Provider) takeFlow(w http.ResponseWriter, r *http.Request, state string) (flow, error) {
	name := flowCookieName(state)
	if state == "" || name == "" {
		return flow{}, errState
	}
	c, err := p.Manager().Cookie(r, name)
	if err != nil {
		return flow{}, errState
	}
	p.Manager().ClearCookie(w, r, name)
	f, err := p.openSealed(c.Value)
	if err != nil || subtle.ConstantTimeCompare([]byte(f.State), []byte(state)) != 1 {
		return flow{}, errState
	}
	unused, err := p.spend(r.Context(), "oauth-state", state, FlowTTL)
	if err != nil {
		return flow{}, fmt.Errorf("oauth: marking the sign-in's state used: %w", err)
	}
	if !unused {
		return flow{}, errState
	}
	return f, nil
}

// openSealed opens a sign-in cookie's value.
func (p *Provider) openSealed(sealed string) (flow, error) {
	plain, err := p.Manager().Open(sealPurpose, sealed)
	if err != nil {
		return flow{}, err
	}
	var f flow
	if err := json.Unmarshal(plain, &f); err != nil {
		return flow{}, errState
	}
	return f, nil
}
