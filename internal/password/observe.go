package password

import "time"

// Observer is told about the work a Verifier does: each bcrypt comparison
// and how long it took, how long a check waited for the gate, and whether
// the credential cache answered. It is handed to the Verifier when it is
// made (VerifierOptions.Observer; the program's comes from auth.Deps.Hooks).
// It must be cheap and safe for concurrent use.
type Observer interface {
	BcryptChecked(d time.Duration)
	GateWaited(d time.Duration)
	CacheLookup(hit bool)
}
