package login

import (
	"context"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/passkey"
	"github.com/backupweb/backupweb/internal/session"
)

// msgPasskeysTitle is the label of the passkeys page's link.
const msgPasskeysTitle = "Passkeys"

// openPasskeys makes the passkey service, passkeys in the factors file,
// bound to [server] public_url. Ceremonies are kept apart from the other
// single-use tokens: with a shared store, in it (begun on one instance,
// finished on any) and spent as a kind of their own; otherwise in this
// process's memory, in passkey's own bounded tables, since a ceremony
// outlives no restart worth keeping it for.
func (p *Provider) openPasskeys(deps auth.Deps) (*passkey.Service, error) {
	key, err := p.Manager().PurposeKey("webauthn-ceremony")
	if err != nil {
		return nil, err
	}
	var store session.Store = session.NewMemoryStore(deps.Clock())
	var spend func(ctx context.Context, key string, ttl time.Duration) (bool, error)
	if deps.Shared != nil {
		store = p.Guard.Store()
		spend = func(ctx context.Context, key string, ttl time.Duration) (bool, error) {
			return deps.Shared.SpendOnce(ctx, spendCeremony, key, ttl)
		}
	}
	cs, err := passkey.NewCeremonies(store, key, spend, deps.Clock())
	if err != nil {
		return nil, err
	}
	if prev, ok, err := p.Manager().PreviousPurposeKey("webauthn-ceremony"); err != nil {
		return nil, err
	} else if ok {
		if err := cs.AcceptPrevious(prev); err != nil {
			return nil, err
		}
	}
	return passkey.New(passkey.Options{
		PublicURL: deps.PublicURL, Name: "backupweb",
		Keys: passkey.NewStateKeys(p.state), Ceremonies: cs, Now: deps.Clock(),
	})
}

// AccountLinks are the account page and, when passkeys are offered, the
// passkeys page, for a user signed in with a session
// (auth.AccountLinker): the catalog page links to them.
func (p *Provider) AccountLinks(u auth.User) []auth.AccountLink {
	if !u.HasSession() {
		return nil
	}
	links := p.Guard.AccountLinks(u)
	if p.step.PasskeysOffered() {
		links = append(links, auth.AccountLink{Label: msgPasskeysTitle, Path: secondfactor.PasskeysPath})
	}
	return links
}

// spendCeremony is the kind of single-use token a passkey ceremony's store
// key is spent as (auth.Shared.SpendOnce).
const spendCeremony = "webauthn-ceremony"
