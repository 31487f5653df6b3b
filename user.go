package backupweb

import (
	"context"
	"net/http"
	"slices"

	"github.com/backupweb/backupweb/internal/auth"
)

// User is who made a request, as the provider admitted them: the
// specification's current user. It is a value; copy it freely.
type User struct {
	// Username is the name the user signed in with: basic's configured
	// user, the user file's name for flask-login, the e-mail address for
	// oauth, "anonymous" for none.
	Username string
	// Type is the authentication type that admitted the user.
	Type string
	// Email is the verified e-mail address the identity provider gave
	// (oauth); "" for the other types.
	Email string
	// Groups are the user's groups, sorted: from groups_file for basic and
	// flask-login, from the identity provider for oauth. Nil when none.
	Groups []string

	record map[string]string
}

// Record returns the current-user record the program's /api/me answers:
// "username" and "auth_type", then what the type knows (for oauth
// "email", "name", "provider"). The map is the caller's to change.
func (u User) Record() map[string]any {
	m := make(map[string]any, len(u.record)+2)
	for k, v := range u.record {
		m[k] = v
	}
	m["username"] = u.Username
	m["auth_type"] = u.Type
	return m
}

// CurrentUser returns the user of a request that passed RequireAuth (the
// specification's get_current_user). ok is false for a request that did
// not (a route that is not protected has no user), and for a nil one.
func CurrentUser(r *http.Request) (User, bool) {
	if r == nil {
		return User{}, false
	}
	return FromContext(r.Context())
}

// FromContext returns the user of a request that passed RequireAuth, from
// its context: for code below the handler that is handed the context
// rather than the request (the specification's get_current_user(), which
// needed no request). ok is false outside such a request.
func FromContext(ctx context.Context) (User, bool) {
	if ctx == nil {
		return User{}, false
	}
	u, ok := auth.FromContext(ctx)
	if !ok {
		return User{}, false
	}
	return User{
		Username: u.Name,
		Type:     u.Type,
		Email:    u.Attrs.Get("email"),
		Groups:   slices.Clone(u.Groups),
		record:   u.Record(),
	}, true
}
