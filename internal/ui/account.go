package ui

import "time"

// AccountPage is the data of the "account" page at /_backupweb/account:
// the signed-in user's sessions, each with a button that ends it and one
// that ends all others, and for flask-login their machine tokens (a form
// that makes one, asking for the password again; a button that revokes
// each) and a link to their second factors.
type AccountPage struct {
	Brand Brand
	Title string
	User  Viewer
	// CSRFToken is the value of every form's csrf_token field.
	CSRFToken string
	// EndURL takes id (one session) or others=1 (all but this one).
	EndURL   string
	Sessions []SessionRow
	// Tokens is true for a type with machine tokens (flask-login): the
	// token list and the form are shown.
	Tokens        bool
	TokenRows     []TokenRow
	CreateURL     string
	RevokeURL     string
	FactorsURL    string // empty: no link to the second factors
	NewToken      string // the token just made, shown this once
	Notice, Error string
}

// SessionRow is one session on the account page.
type SessionRow struct {
	ID, Client, Agent string
	Created, LastSeen time.Time
	Current           bool
}

// TokenRow is one machine token on the account page (never the token).
type TokenRow struct {
	ID, Label, Scope string
	Created          time.Time
	Expires          time.Time
	LastUsed         time.Time
}
