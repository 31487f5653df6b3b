package login

import (
	"context"
	"slices"
	"strings"
	"unicode"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/directory"
)

// Where users and their passwords are checked: [authentication] users.
const (
	// UsersFromFile is the user file (users_file), the default.
	UsersFromFile = "file"
	// UsersFromDirectory is an LDAP directory ([ldap], package
	// directory).
	UsersFromDirectory = "ldap"
)

// AttrGroups is the session attribute that holds a directory user's
// groups, read at sign-in, one per line; Identify moves it to
// auth.User.Groups.
const AttrGroups = "groups"

// verdict is what a password check found: the user's name as the source
// spells it (the directory's may differ in letter case from what was
// typed), the credential fingerprint sessions are bound to, and the
// directory's groups.
type verdict struct {
	name, cred string
	groups     []string
	email      string // the directory's e-mail address, "" without one
}

// AttrEmail is the session attribute of a directory user's e-mail address
// (as type oauth records it), what the proxy and forward authentication
// send as the user's e-mail.
const AttrEmail = "email"

// checkDirectory asks the directory about name and pw. A directory that
// does not answer is an error (a 503, logged once here), never a "no"
// and never a fallback to anything else.
func (p *Provider) checkDirectory(ctx context.Context, name, pw string) (verdict, bool, error) {
	e, ok, err := p.dir.SignIn(ctx, name, []byte(pw))
	if err != nil {
		p.log.ErrorContext(ctx, "auth: the directory did not answer; sign-in refused", "auth_type", Name, "directory", p.dir.URL(), "err", err)
		return verdict{}, false, err
	}
	if !ok {
		return verdict{}, false, nil
	}
	cred, _ := p.users.Load().cred(e.Name)
	return verdict{name: e.Name, cred: cred, groups: e.Groups, email: cleanEmail(e.Email)}, true, nil
}

// throttleName is the name a sign-in attempt is counted against: the
// directory compares names without regard to letter case, so its
// attempts at ALICE and alice count together.
func (p *Provider) throttleName(name string) string {
	if p.dir != nil {
		return strings.ToLower(name)
	}
	return name
}

// encodeGroups is the AttrGroups value of groups; names with a line
// break are left out (they could not be told apart).
func encodeGroups(groups []string) string {
	kept := slices.DeleteFunc(slices.Clone(groups), func(g string) bool { return strings.ContainsAny(g, "\r\n") })
	return strings.Join(kept, "\n")
}

// cleanEmail is the directory's e-mail address when it can go in a header
// as it is: no control characters, at most 254 bytes; else "".
func cleanEmail(s string) string {
	if len(s) > 254 || strings.ContainsFunc(s, unicode.IsControl) {
		return ""
	}
	return s
}

// directoryAttrs adds a directory user's groups and e-mail address to a
// session's attributes to be.
func directoryAttrs(facts map[string]string, groups []string, email string) {
	facts[AttrGroups] = encodeGroups(groups)
	if email != "" {
		facts[AttrEmail] = email
	}
}

// withDirectory gives u the groups and e-mail address the directory has
// for them.
func withDirectory(u auth.User, e directory.Entry) auth.User {
	u.Groups = slices.DeleteFunc(slices.Clone(e.Groups), func(g string) bool { return strings.ContainsAny(g, "\r\n") })
	if e.Email != "" {
		u.Attrs = u.Attrs.With(AttrEmail, e.Email)
	}
	return u
}

// withGroups moves AttrGroups of a session's user to its Groups.
func withGroups(u auth.User) auth.User {
	g, has := u.Attrs.Lookup(AttrGroups)
	if !has {
		return u
	}
	if g != "" {
		u.Groups = strings.Split(g, "\n")
	}
	u.Attrs = u.Attrs.Without(AttrGroups)
	return u
}

// directoryReady reports whether the directory answers, for /readyz.
func (p *Provider) directoryReady(ctx context.Context) error {
	if err := p.dir.Ready(ctx); err != nil {
		return &auth.NotReady{Part: "the directory does not answer (" + directoryWhy(err) + ")"}
	}
	return nil
}

// directoryWhy names what failed, for /readyz: the URL and the kind of
// failure (timeout, tls, unreachable...), never a password.
func directoryWhy(err error) string {
	if de, ok := err.(*directory.Error); ok {
		return de.URL + ": " + de.Why
	}
	return err.Error()
}
