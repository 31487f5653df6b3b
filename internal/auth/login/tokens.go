package login

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/peer"
	"github.com/backupweb/backupweb/internal/refusal"
	"github.com/backupweb/backupweb/internal/throttle"
	"github.com/backupweb/backupweb/internal/tokens"
)

// AttrToken is the user attribute that names the machine token a request
// was admitted with (its id, never the token).
const AttrToken = "token"

// bearerToken returns the machine token of r's "Authorization: Bearer"
// header, and whether it has one: a value that starts with tokens.Prefix.
// Any other Authorization header (a guarded application's own bearer
// tokens, passed on with pass_authorization) is not backupweb's to judge,
// and the request is identified by its session as before.
func bearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if len(h) < 7 || !strings.EqualFold(h[:7], "Bearer ") {
		return "", false
	}
	v := strings.TrimSpace(h[7:])
	return v, strings.HasPrefix(v, tokens.Prefix)
}

// bearerGate adds routes that only a signed-in session may use (the
// account, passkeys and password pages) to mux so that a request with a
// machine token that is not valid is refused as on every protected route:
// 401 with WWW-Authenticate: Bearer error="invalid_token", counted and
// logged, never the login page. A valid token goes on to the route, which
// answers it as it answers anything that is not a session.
type bearerGate struct {
	mux sessionauth.Routes
	p   *Provider
}

// HandleFunc adds h at pattern behind the gate.
func (g bearerGate) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	g.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if tok, ok := bearerToken(r); ok && !g.p.noTokens {
			if _, _, err := g.p.identifyToken(r, tok); err != nil {
				w.Header().Set("Cache-Control", "no-store")
				g.p.errs.Error(w, r, err)
				return
			}
		}
		h(w, r)
	})
}

// Identify admits r by its machine token when it carries
// "Authorization: Bearer", else by its session cookie (the Guard).
func (p *Provider) Identify(r *http.Request) (auth.User, bool, error) {
	if tok, ok := bearerToken(r); ok && !p.noTokens {
		return p.identifyToken(r, tok)
	}
	u, ok, err := p.Guard.Identify(r)
	if !ok || err != nil {
		return u, ok, err
	}
	return withGroups(u), true, nil
}

// identifyToken admits r as the user of the machine token value: a hash
// lookup in the tokens file, no bcrypt. A blocked client address is
// refused before the lookup; a token that is unknown, revoked, expired,
// of a user no longer in the user file, or unusable because the tokens
// file is broken counts as a failure of the address, exactly like a wrong
// password, and is answered 401 with WWW-Authenticate: Bearer
// error="invalid_token" (a refusal.TokenError). The user has no
// second factor (a token never satisfies a second_factor rule), their
// groups come from the groups file as for a session, and the token's
// scope rides in the user.
//
// With users = ldap the token's user must also still be the directory's,
// one entry, not disabled (directoryUser: asked at most once per
// DirectoryCheckTTL), and their groups and e-mail address are the
// directory's: a user removed or disabled there is refused as an unknown
// token, and a directory that does not answer is a 503, never a "yes".
func (p *Provider) identifyToken(r *http.Request, value string) (auth.User, bool, error) {
	ctx := r.Context()
	client := throttle.AddrKey(peer.Of(r).Addr)
	v, err := p.byAddr.Check(ctx, client)
	if err != nil {
		return auth.User{}, false, fmt.Errorf("login: counting the attempt: %w", err)
	}
	if err := passwordauth.Admit(p.audit, r, Name, v, client, ""); err != nil {
		return auth.User{}, false, err
	}
	tok, st, err := p.state.Token(ctx, value)
	if err != nil {
		return auth.User{}, false, fmt.Errorf("login: looking a token up: %w", err)
	}
	reason, user := auth.ReasonTokenUnknown, ""
	switch st {
	case tokens.Valid:
		if !p.users.Load().has(tok.User) {
			break
		}
		if p.dir != nil {
			e, ok, err := p.directoryUser(ctx, tok.User, false)
			if err != nil {
				return auth.User{}, false, err
			}
			if !ok {
				user = tok.User
				break
			}
			return withDirectory(p.tokenUser(r, tok), e), true, nil
		}
		return p.tokenUser(r, tok), true, nil
	case tokens.Expired:
		reason, user = auth.ReasonTokenExpired, tok.User
	case tokens.Broken:
		reason = auth.ReasonTokensBroken
	}
	return auth.User{}, false, p.tokenFailed(r, client, reason, user)
}

// tokenFailed counts a refused token against the client address (taking
// and failing an attempt slot, as a wrong password does), logs it, and
// returns the refusal.TokenError that answers it: 401 with a Bearer
// challenge on every route and in every mode, never the login page a
// browser would get, since a script sent the token.
func (p *Provider) tokenFailed(r *http.Request, client, reason, user string) error {
	ctx := r.Context()
	v, err := p.byAddr.Acquire(ctx, client)
	if err != nil {
		return fmt.Errorf("login: counting the attempt: %w", err)
	}
	if err := passwordauth.Admit(p.audit, r, Name, v, client, user); err != nil {
		return err
	}
	if _, err := p.byAddr.Fail(context.WithoutCancel(ctx), v.Slot); err != nil {
		p.log.WarnContext(ctx, "auth: recording a failed attempt failed", "auth_type", Name, "err", err)
	}
	p.audit.Refused(r, Name, reason, user)
	return &refusal.TokenError{Reason: reason}
}

// tokenUser is the user a valid token admits, its use recorded (and its
// first use from a new client address logged).
func (p *Provider) tokenUser(r *http.Request, tok *tokens.Token) auth.User {
	client := peer.Of(r).String()
	if p.state.TokenUsed(r.Context(), tok, client, p.now()) {
		p.log.LogAttrs(r.Context(), slog.LevelInfo, "auth token used from a new address",
			slog.String("auth_type", Name), slog.String("user", tok.User), slog.String("token", tok.ID), slog.String("client", client))
	}
	if o, ok := p.audit.Events.(auth.TokenObserver); ok {
		o.TokenAdmitted(Name)
	}
	u := auth.User{Name: tok.User, Type: Name, Attrs: attrs.Map{}.With(AttrToken, tok.ID)}
	if s := tok.Scope(); s.ReadOnly || s.Path != "" {
		u.Scope = &access.Scope{ReadOnly: s.ReadOnly, Path: s.Path}
	}
	return u
}

// Recheck returns the check of r's credential (auth.Rechecker): for a
// machine token, that it is still in the tokens file, unexpired, not
// revoked on another instance, and its user still listed; for a session,
// the Guard's.
func (p *Provider) Recheck(r *http.Request, u auth.User) func(ctx context.Context) (bool, error) {
	value, ok := bearerToken(r)
	if !ok {
		return p.Guard.Recheck(r, u)
	}
	return func(ctx context.Context) (bool, error) {
		tok, st, err := p.state.Token(ctx, value)
		if err != nil || st != tokens.Valid || tok.User != u.Name || tok.ID != u.Attrs.Get(AttrToken) || !p.users.Load().has(tok.User) {
			return false, err
		}
		if p.dir != nil {
			_, ok, err := p.directoryUser(ctx, tok.User, false)
			return ok && err == nil, err
		}
		return true, nil
	}
}

// Tokens returns the tokens file as the provider reads it, nil when the
// tokens are kept in a shared store.
func (p *Provider) Tokens() *tokens.Store {
	if p.files == nil {
		return nil
	}
	return p.files.TokensFile()
}

// RevokeToken removes the token id of user from where tokens are kept
// (with a shared store, every instance refuses it at its next request).
// It logs the revocation; by is who asked ("account page").
func (p *Provider) RevokeToken(ctx context.Context, user, id, by string) error {
	if _, err := p.state.RevokeToken(ctx, user, id); err != nil {
		return err
	}
	p.log.Info("auth token revoked", "auth_type", Name, "user", user, "token", id, "by", by)
	return nil
}

// CreateToken adds a token for user with label and the given lifetime
// (zero: none) and scope, and returns it: shown once, never stored. It
// logs the creation.
func (p *Provider) CreateToken(user, label string, lifetime time.Duration, scope tokens.Scope, by string) (string, *tokens.Token, error) {
	t := &tokens.Token{User: user, Label: label, ReadOnly: scope.ReadOnly, Path: scope.Path}
	secret, err := tokens.New(t, p.now())
	if err != nil {
		return "", nil, err
	}
	if lifetime > 0 {
		t.Expires = t.Created.Add(lifetime)
	}
	if err := p.state.AddToken(context.Background(), *t); err != nil {
		return "", nil, err
	}
	p.log.Info("auth token created", "auth_type", Name, "user", user, "token", t.ID, "by", by)
	return secret, t, nil
}

// ReadTokens reads the tokens file (TokensFile, by default beside the user
// file) as the provider will. path is the file read, "" when there is none
// (no tokens yet), for the caller to check that it is private to its
// owner. A file that cannot be read or parsed is an error at tokens_file
// naming the file and line: the configuration does not start (check-config
// exits 1). A file that breaks while the service runs makes it refuse every
// token until it is fixed.
func (c Config) ReadTokens() (path string, problems []error) {
	if !c.hasUsers() || c.TokensFile == "" && c.UsersFile == "" {
		return "", nil
	}
	path = c.WithDefaults().TokensFile
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return "", nil
	}
	if _, err := tokens.Read(path); err != nil {
		return path, []error{&auth.KeyError{Key: "tokens_file", Err: fmt.Errorf("%v (every machine token would be refused)", err)}}
	}
	return path, nil
}
