// Package session keeps server-side login sessions for the session-based
// authentication types (flask-login and oauth): a small Store interface with
// an in-memory and a file-backed implementation, a Manager that creates,
// loads and revokes sessions and sets their cookie, CSRF tokens for the
// forms posted under a session and for the login form before one exists,
// and sealed (encrypted, authenticated, expiring) values for state that must
// travel through the browser, such as an OAuth flow's state and verifier.
//
// The package depends only on the standard library and on nothing else of
// the program: the store, the secret key, the clock, the logger and the rule
// that tells whether a request came over https are all given to it.
//
// # Sessions
//
// A session id is 32 bytes from crypto/rand; the cookie (default name
// "backupweb_session") holds it base64url-encoded, and nothing else ever
// does: the store keeps each session under HMAC-SHA256(derived key, id), so a
// copy of the store yields no usable cookie. Start always issues a new id and
// deletes the session the request came with (rotation at login); Destroy
// deletes the session and clears the cookie, so a copied cookie stops
// working at logout. A session ends after IdleTimeout without a person's
// requests (default 30 minutes; by default only top-level navigations
// count, not a page's background traffic, see Renewal) and, whatever its
// activity, Lifetime after it began (default 12 hours). The cookie itself lasts until the browser closes.
//
// Every cookie the package sets is HttpOnly, SameSite=Lax, Path=/, and
// Secure when Options.Secure says the request came over https.
//
// Loading a valid session costs one HMAC, one store lookup and a few small
// copies; activity is written to the store at most once a minute per
// session, so an ordinary request writes nothing.
//
// # Keys
//
// The secret key (BACKUP_SECRET_KEY, at least 32 bytes) is never used
// directly. HKDF-SHA256 derives one key per purpose, each under its own info
// label: the store-key hash, the CSRF tokens, the login form's cookie
// signature, and one AES-256-GCM key per Seal purpose. Changing the secret
// key therefore ends every session and invalidates every outstanding token
// and sealed value.
//
// # Stores
//
// FileStore is the default: records live in memory and are persisted to
// <dir>/sessions.json (directory 0700, file 0600, rewritten atomically), so
// sessions survive a restart. Logins and logouts reach the disk before they
// are acknowledged; activity refreshes are written behind. MemoryStore keeps
// nothing across restarts and is meant for tests.
//
// Several instances behind one load balancer need a store they share. Such a
// store implements Store (and preferably Toucher, UserDeleter and io.Closer)
// over the shared service; with Redis, for example:
//
//   - Find: GET "backupweb:session:"+key, JSON-decode the Record; a missing
//     key is ok=false with no error.
//   - Commit: JSON-encode the Record and SET it with EXAT rec.Expires, so
//     Redis drops it by itself; also SADD the key to a per-user set for
//     DeleteUser.
//   - Touch: SET ... XX EXAT expires (XX: only if it still exists, so a
//     request racing a logout cannot bring the session back).
//   - Delete: DEL; DeleteUser: SMEMBERS the user's set, DEL them all.
//   - Close: close the connection pool.
//
// Every instance must be given the same secret key, since store keys, CSRF
// tokens and sealed values are derived from it. Such a store costs a network
// round trip per request; it must not cache records locally for longer than
// the revocation delay the operator accepts, since a cached record outlives
// a logout done on another instance.
//
// # CSRF
//
// A session's CSRF token is an HMAC of its per-session secret under the
// derived CSRF key; the login form's token is an HMAC of a random nonce kept
// in a signed cookie (default name "backupweb_csrf"). Both are masked with a
// fresh random pad on each render (against BREACH) and checked in constant
// time. See CSRFToken and FormToken.
//
// What the package does not do: it writes no response other than cookies,
// decides nothing about redirects or status codes, and never logs a session
// id, token or key.
package session
