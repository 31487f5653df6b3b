package session

import "context"

// Observer is told when sessions start and end (by the manager's Type, and
// for ends a reason: "logout", "expired", "revoked", "limit", "user
// removed"). It is handed to the Manager when it is made
// (Options.Observer; the program's comes from auth.Deps.Hooks), so that
// ends no request causes (a user removed from the user file by a reload)
// are seen too. It must be cheap and safe for concurrent use.
type Observer interface {
	SessionStarted(authType string)
	SessionsEnded(authType, reason string, n int)
}

// ended tells the Observer, if any, that n sessions ended for reason.
func (m *Manager) ended(_ context.Context, reason string, n int) {
	if m.obs != nil && n > 0 {
		m.obs.SessionsEnded(m.typ, reason, n)
	}
}
