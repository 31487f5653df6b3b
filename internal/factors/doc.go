// Package factors owns the factors file: the second factors of the users
// of a flask-login user file, kept beside it (default: the user file's
// path + ".factors") so that the user file stays the Flask-era
// "name:hash" file, untouched.
//
// The file holds one record per line, "NAME:JSON", where NAME is a user
// name of the user file and JSON an object with, all optional:
//
//	totp      the TOTP secret, sealed (AES-256-GCM under a key derived
//	          from the secret key, bound to the user name) and its
//	          enrolment time
//	recovery  the keyed hashes (HMAC-SHA256) of the unused recovery codes
//	handle    the WebAuthn user handle, random and stable per user
//	passkeys  the user's passkeys: name, creation time, credential id and
//	          the credential as opaque JSON
//
// Blank lines and lines starting with "#" are ignored. The file is written
// by replacing it atomically (a temporary file renamed over it, mode 0600)
// under an exclusive lock, so that the command line and the service never
// lose each other's changes.
//
// Reading fails closed: a line that does not parse, a user named twice or
// a TOTP secret that does not decrypt never means "this user has no
// factor". Such a user's status is Broken (they cannot sign in) and the
// problem is reported with the file and line, never the line's content. A
// line whose user name cannot even be read makes every user without a good
// record Broken, since it could have been anyone's.
package factors
