// Package none is authentication type none: every request is let through
// as the user "anonymous". It is the default when no [authentication]
// section is configured, and it is not meant for production.
package none

import (
	"net/http"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/refusal"
)

// Name is the type's name in configuration.
const Name = "none"

// Provider admits every request. The zero value is ready to use.
type Provider struct{}

var _ auth.Provider = Provider{}

// Type returns "none".
func (Provider) Type() string { return Name }

// Identify admits r as the anonymous user.
func (Provider) Identify(*http.Request) (auth.User, bool, error) {
	return auth.User{Name: auth.Anonymous, Type: Name}, true, nil
}

// Challenge is never reached, since Identify admits everyone; it answers 401
// should a caller use it anyway.
func (Provider) Challenge(w http.ResponseWriter, r *http.Request) {
	(&refusal.Errors{}).Refuse(w, r, refusal.NoCredentials)
}
