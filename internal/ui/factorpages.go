package ui

import "html/template"

// StepForm is what the pages of the sign-in's second step share: the
// "secondfactor" page and the "enrol" page.
type StepForm struct {
	// Brand names the service in the header bar and the document title.
	Brand Brand
	// Title is the page's heading and the document title.
	Title string
	// Action is the path the form posts to.
	Action string
	// CSRFToken is the value of the hidden csrf_token field.
	CSRFToken string
	// Next is the value of the hidden next field (on the enrolment page,
	// also where Continue goes once enrolled).
	Next string
	// User is the name of the user signing in or enrolling.
	User string
	// Error is the message shown above the form; empty shows none.
	Error string
	// StartOver is the URL of the sign-in page, to start again.
	StartOver string
	// Passkey is the markup of the passkey part (PasskeySlotHTML: the
	// sign-in with a passkey above the code form, or the registration of
	// one instead of an app); empty shows nothing. It is trusted markup
	// made by the program, never by a user.
	Passkey template.HTML
}

// SecondFactorPage is the data of the "secondfactor" page: the step after
// a right password for a user with a second factor. Its form posts code
// (a TOTP code or a recovery code), csrf_token and next to Action.
type SecondFactorPage struct {
	StepForm
	// HasTOTP tells whether the user has a TOTP secret (else only a
	// recovery code, or a passkey, can be given).
	HasTOTP bool
}

// EnrolPage is the data of the "enrol" page: a user who must have a
// second factor and has none scans a QR code, or types the secret, into
// an authenticator app, and confirms with one code. Once confirmed,
// Recovery lists the recovery codes, shown this once.
type EnrolPage struct {
	StepForm
	// QR is the QR code of the otpauth:// URI as inline SVG (trusted
	// markup made by package qr).
	QR template.HTML
	// Secret is the base32 secret, for typing in by hand.
	Secret string
	// Enrolment is the value of the hidden enrolment field: the secret,
	// sealed for this user and a few minutes.
	Enrolment string
	// Recovery are the recovery codes, set once the code was right.
	Recovery []string
}

// ReauthPage is the data of the "reauth" page: a signed-in user gives
// their password again before a step that needs it (adding or removing a
// second factor). Its form posts password, csrf_token (the session's
// token) and next to Action; StartOver is where Cancel goes.
type ReauthPage struct {
	StepForm
}
