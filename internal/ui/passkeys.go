package ui

import (
	"net/http"
	"time"
)

// ScriptPolicy is the Content-Security-Policy of the pages that run the
// passkey script: the policy of every other page, plus scripts and
// fetches from this origin only (script-src 'self', connect-src 'self').
// Still no inline script, no eval, nothing from elsewhere.
const ScriptPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; script-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// AllowScript sets ScriptPolicy on a page that loads the passkey script
// (PasskeyScript), replacing the policy without scripts.
func AllowScript(h http.Header) { h.Set("Content-Security-Policy", ScriptPolicy) }

// PasskeyScript is the name of the static asset that runs the passkey
// ceremonies in the browser (served under /_backupweb/).
const PasskeyScript = "passkey.js"

// PasskeysPage is the data of the "passkeys" page at
// /_backupweb/passkeys: a signed-in user's passkeys, a form to add one and
// a button to remove each. The page loads PasskeyScript and must be served
// with ScriptPolicy.
type PasskeysPage struct {
	// Brand names the service in the header bar and the document title.
	Brand Brand
	// Title is the page's heading and the document title.
	Title string
	// User is the signed-in user (name, sign-out button).
	User Viewer
	// CSRFToken is the session's token: the remove forms post it as
	// csrf_token, the script sends it as X-CSRF-Token.
	CSRFToken string
	// Passkeys are the user's passkeys, oldest first.
	Passkeys []PasskeyRow
	// BeginURL and FinishURL are where the script begins and finishes a
	// registration; RemoveURL is where the remove forms post.
	BeginURL, FinishURL, RemoveURL string
	// Error and Notice are shown above the list; empty shows none.
	Error, Notice string
	// Next, when set, is a link back to where the user was going
	// ("Continue"), such as after a required enrolment.
	Next string
}

// PasskeyRow is one passkey in the list.
type PasskeyRow struct {
	// ID is the credential id, base64url: the remove form's id field.
	ID string
	// Name is what the user called it.
	Name string
	// Created and LastUsed (zero: never) are shown in UTC.
	Created, LastUsed time.Time
}

// PasskeyButton is the data of the "Use a passkey" button the login page
// and the second-factor page show: the script begins a ceremony at
// BeginURL and finishes it at FinishURL, sending CSRFToken as X-CSRF-Token,
// then follows the answer's next. A zero PasskeyButton shows nothing.
type PasskeyButton struct {
	BeginURL, FinishURL, CSRFToken string
	// Next is sent with the request to begin: where to go after.
	Next string
	// Label is the button's text.
	Label string
}
