package auth

import (
	"log/slog"
	"net/http"
	"slices"

	"github.com/backupweb/backupweb/internal/peer"
)

// ReasonNotAllowed is the logged reason of a signed-in user whom an allow
// list ([proxy] allow_users) does not name.
const ReasonNotAllowed = "user not in allow_users"

// AllowedBy reports whether list admits u: an empty list admits every
// signed-in user; otherwise u's name must be in it, exactly.
func AllowedBy(list []string, u User) bool {
	return len(list) == 0 || slices.Contains(list, u.Name)
}

// LogNotAllowed writes the refusal line of a signed-in user that an allow
// list refuses: the same line as Audit.Refused (warning, "auth refused", the
// type, the reason, the client address, the user), but not counted among
// refused sign-in attempts, since the user did prove who they are. A nil
// log writes nothing.
func LogNotAllowed(log *slog.Logger, r *http.Request, u User) {
	if log == nil {
		return
	}
	log.LogAttrs(r.Context(), slog.LevelWarn, "auth refused",
		slog.String("auth_type", u.Type), slog.String("reason", ReasonNotAllowed),
		slog.String("client", peer.Of(r).String()), slog.String("user", u.Name))
}
