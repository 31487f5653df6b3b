// Package refusal is how the program says no: the catalogue of every
// refusal and error a client can see (status, page title, sentence: one
// table, so that the same case is always answered the same way), the
// error kinds recognised by behaviour (Throttled, Unavailable, ...) with
// the one table from them to a row (ReplyTo), and the writer that answers
// JSON to programs and a page to people (Errors).
//
// It stands apart from package auth so that every part of the program,
// authenticated or not (the catalog, the proxy, forward authentication),
// refuses through it, and auth stays the core: users, providers,
// RequireAuth.
package refusal

import (
	"fmt"
	"net/http"
)

// Refusal names one answer of the catalogue of refusals: every refusal
// and error a client of the program can see, with its status, the title of
// its page and its sentence, is one row of the table below. Callers name
// the row (Errors.Refuse(w, r, refusal.NoBackup)); none writes a status or a
// sentence of its own, so the same case is always answered the same way
// and docs/http.md can be checked against the table.
type Refusal uint8

// The catalogue's rows. A sentence holding %s takes the arguments given to
// Errors.Refuse or Message (the product's name, a time to wait).
const (
	// AskPassword is basic's 401 (with WWW-Authenticate).
	AskPassword Refusal = iota + 1
	// SignInFirst is the session types' 401 to a request that is not a
	// browser navigation, and forward auth's.
	SignInFirst
	// NoCredentials is type none's 401, never reached in practice since
	// none admits everyone.
	NoCredentials
	// SignInEnded is the proxy's 401 to a request its recheck cut.
	SignInEnded
	// StaleForm is the 403 of a logout without a good CSRF token; %s is
	// what the service guards (ui.Brand.ProductName).
	StaleForm
	// CrossOrigin is the 403 of a cross-origin state-changing request.
	CrossOrigin
	// NotAllowed is the 403 of a signed-in user whom an allow list
	// ([proxy] allow_users) does not name. It names no other user and says
	// nothing of the list.
	NotAllowed
	// ForwardThrottled is the 403 forward auth answers nginx for a
	// throttled client: nginx turns any status but 2xx, 401 and 403 into
	// a 500.
	ForwardThrottled
	// NoRoute is the 404 of an address no route takes.
	NoRoute
	// NoBackup is the 404 of a backup name that is not in the folder.
	NoBackup
	// NoFolder is the 404 of a catalog folder that is not in the
	// backups folder (or is hidden: a dot folder, a link).
	NoFolder
	// BadListing is the 400 of a catalog listing whose q, sort, order,
	// limit or cursor cannot be read.
	BadListing
	// BadArchive is the 400 of a folder asked as an archive of a kind
	// other than tar.
	BadArchive
	// WrongMethod is the 405 of a known address asked with another method.
	WrongMethod
	// BadForm is the 400 of a login form that cannot be read.
	BadForm
	// FormTooLarge is the 413 of a login form over its limit.
	FormTooLarge
	// TooLarge is the 413 of any other request body over its limit.
	TooLarge
	// TooManyAttempts is the 429 of a throttled client; %s is how long to
	// wait, in minutes (see ReplyTo).
	TooManyAttempts
	// ServerError is the 500 of an unexpected error of an authentication
	// step (logged).
	ServerError
	// Panicked is the 500 of a handler that panicked (logged).
	Panicked
	// NotConfigured is the 500 of a program started without a provider.
	NotConfigured
	// ListFailed is the 500 of a backups folder that cannot be listed.
	ListFailed
	// ReadFailed is the 500 of a backup that cannot be read.
	ReadFailed
	// EncodeFailed is the 500 of an answer that cannot be encoded.
	EncodeFailed
	// UpstreamUnreachable is the proxy's 502.
	UpstreamUnreachable
	// UpstreamTimeout is the proxy's 504.
	UpstreamTimeout
	// StoreNotAnswering is the 503 of a session store that does not answer
	// (an error that is StoreDown).
	StoreNotAnswering
	// DirectoryNotAnswering is the 503 of a sign-in the directory ([ldap])
	// could not answer (an error that is DirectoryDown): unreachable,
	// slower than its timeout, or not verifiable.
	DirectoryNotAnswering
	// Busy is the 503 of work at capacity (bcrypt).
	Busy
	// TokensFull is the 503 of a table of single-use tokens that is full
	// (an error that is TableFull): nothing spent is forgotten to make
	// room, so the new sign-in or ceremony waits.
	TokensFull
	// TooManyBegun is the 429 of a client that starts sign-ins or passkey
	// ceremonies faster than their limit (an error that is RateLimited);
	// %s is how long to wait.
	TooManyBegun

	// The login form's refusals, shown on the form itself for a person.

	// BadCredentials is the one answer to an unknown name and a wrong
	// password alike, so the answer does not tell which names exist.
	BadCredentials
	// EmptyCredentials is the 401 of a form without name or password.
	EmptyCredentials
	// FormExpired is the 403 of a login form without a good CSRF token.
	FormExpired

	// The second factor's refusals (flask-login), shown on its pages.

	// WrongCode is the 401 of a TOTP or recovery code that is not right.
	WrongCode
	// CodeUsed is the 401 of a code already spent (a TOTP code within its
	// window, a recovery code).
	CodeUsed
	// CodeEmpty is the 401 of a form without a code.
	CodeEmpty
	// SecondStepExpired is the 401 of a second step whose pending state
	// expired, was spent, or belongs to another browser.
	SecondStepExpired
	// FactorsUnusable is the 403 of a user whose factors record cannot be
	// used (a broken edit of the factors file): never a bypass.
	FactorsUnusable
	// EnrolExpired is the 401 of an enrolment form whose sealed secret
	// expired or does not belong to this sign-in.
	EnrolExpired
	// EnrolledMeanwhile is the 409 of an enrolment for a user who got a
	// second factor since the password step.
	EnrolledMeanwhile
	// PasskeyRefused is the 401 of a passkey answer that does not verify.
	PasskeyRefused
	// PasskeyNotAdded is the 400 of a registration that does not verify.
	PasskeyNotAdded
	// PasskeyNotAddedAtSignIn is the 400 of a registration at the
	// enrolment step, whose sign-in must start again.
	PasskeyNotAddedAtSignIn
	// PasskeyName is the 400 of a passkey name that is empty or too long.
	PasskeyName
	// PageStale is the 403 of a signed-in page's action without a good
	// CSRF token (the passkeys page).
	PageStale
	// PasswordAgain is the 403 of a step that needs the password given
	// again within the last few minutes (a change to the second factors)
	// asked by a client that is not a browser page.
	PasswordAgain
	// WrongPassword is the 401 of a wrong password given again by a
	// signed-in user.
	WrongPassword
	// FactorsChanged is the 409 of a passkey registration for a user
	// whose second factors changed since it began (another enrolment
	// finished first).
	FactorsChanged
	// BadRequest is the 400 of a request body that cannot be read.
	BadRequest
	// TwoCredentials is the 400 of a request with more than one
	// Authorization header, or one holding more than one credential.
	TwoCredentials

	// The access rules' refusals of a signed-in user.

	// RuleDenied is the 403 of a request an [access] rule refuses.
	RuleDenied
	// SecondFactorRequired is the 403 of a request an [access] rule
	// keeps for sessions made with a second factor.
	SecondFactorRequired
	// AmbiguousPath is the 403 of a path that reads differently once
	// cleaned, so that the rules could not decide it one way.
	AmbiguousPath
	// AmbiguousAddress is the 400 of such a path asked before sign-in,
	// when one of its readings falls to a rule that refuses.
	AmbiguousAddress
	// PathOverride is the 400 of a forward-authentication question whose
	// request carries a path-override header (X-Original-URL and its
	// kin), which names a second path beside the one judged.
	PathOverride
	// OutOfScope is the 403 of a request a machine token's scope
	// (read-only, a path prefix) does not permit.
	OutOfScope
	// TokenRefused is the 401 of a machine token that is unknown,
	// altered, expired or revoked (or unusable because the tokens file is
	// broken): never a redirect, since a script sent it.
	TokenRefused
	// MisdirectedHost is the 421 of a request for a host the service
	// does not answer for: rules name hosts, and the request's Host is
	// none of them nor public_url's.
	MisdirectedHost

	// The OAuth sign-in's refusals, each with a title of its own.

	// OAuthBadState: the callback's state is unknown, expired or used.
	OAuthBadState
	// OAuthNoCode: the callback carries no authorization code.
	OAuthNoCode
	// OAuthDenied: the identity provider did not sign the person in.
	OAuthDenied
	// OAuthNoEmail: the identity provider told no e-mail address.
	OAuthNoEmail
	// OAuthUnverified: the e-mail address is not verified.
	OAuthUnverified
	// OAuthNotAdmitted: the account is not admitted by the configuration.
	OAuthNotAdmitted
	// OAuthIDToken: the ID token could not be verified.
	OAuthIDToken
	// OAuthProvider: the identity provider could not be used.
	OAuthProvider
	// OAuthServer: the sign-in failed because of this service.
	OAuthServer
	// OAuthLogoutToken: a back-channel logout that ended nothing, because
	// its logout token was refused or could not be applied; %s says why.
	OAuthLogoutToken

	refusalEnd
)

// refusalRow is one row of the catalogue: the status, the page's title
// (empty: the status's text) and the sentence.
type refusalRow struct {
	status         int
	title, message string
}

// catalogue is the one table of refusals.
var catalogue = [refusalEnd]refusalRow{
	AskPassword:           {http.StatusUnauthorized, "", "Authentication required: this service asks for a user name and password."},
	SignInFirst:           {http.StatusUnauthorized, "", "Authentication required: sign in first."},
	NoCredentials:         {http.StatusUnauthorized, "", "authentication required"},
	SignInEnded:           {http.StatusUnauthorized, "", "Your sign-in has ended: sign in again."},
	StaleForm:             {http.StatusForbidden, "", "This page is out of date, so the request was not carried out. Go back to %s, reload the page and try again."},
	CrossOrigin:           {http.StatusForbidden, "", "Cross-origin requests are not allowed."},
	NotAllowed:            {http.StatusForbidden, "", "You are signed in, but your account may not use this application. Sign out and sign in with another account, or ask the administrator."},
	ForwardThrottled:      {http.StatusForbidden, "", "Too many failed attempts."},
	NoRoute:               {http.StatusNotFound, "", "There is nothing at this address."},
	NoBackup:              {http.StatusNotFound, "", "There is no backup of that name."},
	NoFolder:              {http.StatusNotFound, "", "There is no folder of that name."},
	BadListing:            {http.StatusBadRequest, "", "The search, sort, order, limit or page of this listing could not be read."},
	BadArchive:            {http.StatusBadRequest, "", "A folder can be downloaded whole as a tar archive only: ask for ?archive=tar."},
	WrongMethod:           {http.StatusMethodNotAllowed, "", "This address does not accept that method."},
	BadForm:               {http.StatusBadRequest, "", "The sign-in form could not be read."},
	FormTooLarge:          {http.StatusRequestEntityTooLarge, "", "The form is too large."},
	TooLarge:              {http.StatusRequestEntityTooLarge, "", "The request is too large."},
	TooManyAttempts:       {http.StatusTooManyRequests, "", "Too many failed attempts. Try again in %s."},
	ServerError:           {http.StatusInternalServerError, "", "Authentication failed because of a server error."},
	Panicked:              {http.StatusInternalServerError, "", "Something went wrong on the server."},
	NotConfigured:         {http.StatusInternalServerError, "", "Authentication is not configured."},
	ListFailed:            {http.StatusInternalServerError, "", "The list of backups could not be read."},
	ReadFailed:            {http.StatusInternalServerError, "", "The backup could not be read."},
	EncodeFailed:          {http.StatusInternalServerError, "", "The answer could not be encoded."},
	UpstreamUnreachable:   {http.StatusBadGateway, "", "The guarded service could not be reached. Try again in a moment."},
	UpstreamTimeout:       {http.StatusGatewayTimeout, "", "The guarded service did not answer in time. Try again in a moment."},
	StoreNotAnswering:     {http.StatusServiceUnavailable, "", "Sign-in is unavailable right now: the session store does not answer. Try again in a moment."},
	DirectoryNotAnswering: {http.StatusServiceUnavailable, "", "Sign-in is unavailable right now: the directory does not answer. Try again in a moment."},
	Busy:                  {http.StatusServiceUnavailable, "", "The server is busy. Try again in a moment."},
	TokensFull:            {http.StatusServiceUnavailable, "", "Too many sign-ins are in progress right now. Try again in a moment."},
	TooManyBegun:          {http.StatusTooManyRequests, "", "Too many sign-ins or passkey requests were started. Try again in %s."},

	BadCredentials:   {http.StatusUnauthorized, "", "Wrong user name or password."},
	EmptyCredentials: {http.StatusUnauthorized, "", "Enter your user name and password."},
	FormExpired:      {http.StatusForbidden, "", "The sign-in form has expired. Please sign in again."},

	WrongCode:               {http.StatusUnauthorized, "", "Wrong code."},
	CodeUsed:                {http.StatusUnauthorized, "", "This code was used already. Wait for the next one, or use a recovery code."},
	CodeEmpty:               {http.StatusUnauthorized, "", "Enter the code."},
	SecondStepExpired:       {http.StatusUnauthorized, "", "The sign-in has expired or was completed already. Please sign in again."},
	FactorsUnusable:         {http.StatusForbidden, "", "Your second factor cannot be checked. Ask the administrator to reset it."},
	EnrolExpired:            {http.StatusUnauthorized, "", "The set-up form has expired. Please start again."},
	EnrolledMeanwhile:       {http.StatusConflict, "", "A second factor was set up for you meanwhile. Please sign in again."},
	PasskeyRefused:          {http.StatusUnauthorized, "", "The passkey was not accepted."},
	PasskeyNotAdded:         {http.StatusBadRequest, "", "The passkey could not be added. Try again."},
	PasskeyNotAddedAtSignIn: {http.StatusBadRequest, "", "The passkey could not be added. Sign in again to retry."},
	PasskeyName:             {http.StatusBadRequest, "", "Give the passkey a name of at most 64 characters."},
	PageStale:               {http.StatusForbidden, "", "This page is out of date. Reload it and try again."},
	BadRequest:              {http.StatusBadRequest, "", "The request could not be read."},
	TwoCredentials:          {http.StatusBadRequest, "", "The request carries more than one set of credentials (Authorization), so it is refused. Send one."},
	PasswordAgain:           {http.StatusForbidden, "", "Confirm your password first: this needs it given again within the last 5 minutes. Reload the page to do so."},
	WrongPassword:           {http.StatusUnauthorized, "", "Wrong password."},
	FactorsChanged:          {http.StatusConflict, "", "Your second factors changed while this one was being added, so it was not added. Reload the page and try again."},

	RuleDenied:           {http.StatusForbidden, "", "You are signed in, but your account may not use this page. Ask the administrator if you need it."},
	SecondFactorRequired: {http.StatusForbidden, "", "This page requires a second factor: sign out, then sign in again with your password and your code or passkey."},
	AmbiguousPath:        {http.StatusForbidden, "", "This address can be read in several ways, so it is refused. Use its plain form, without \"..\", \"//\", \";\" or encoded slashes."},
	AmbiguousAddress:     {http.StatusBadRequest, "", "This address can be read in several ways. Ask for its plain form, without \"..\", \"//\", \";\" or encoded slashes."},
	PathOverride:         {http.StatusBadRequest, "", "This request names another address in a header (X-Original-URL, X-Rewrite-URL or X-Override-URL), so it is refused. Send it without that header."},
	OutOfScope:           {http.StatusForbidden, "", "This token may not be used for this request: it is read-only or limited to other paths."},
	TokenRefused:         {http.StatusUnauthorized, "", "This token is not valid: it is unknown, expired or revoked."},
	MisdirectedHost:      {http.StatusMisdirectedRequest, "Wrong address", "This service does not answer for this host name. Use the address the administrator gave you."},

	OAuthBadState: {http.StatusBadRequest, "Sign-in expired",
		"This sign-in is unknown to this browser, has expired or was already used. Open the service again to start a new sign-in, at the same address as the configured redirect_uri."},
	OAuthNoCode: {http.StatusBadRequest, "Sign-in incomplete",
		"The identity provider sent the browser back without an authorization code. Start the sign-in again."},
	OAuthDenied: {http.StatusUnauthorized, "Sign-in refused",
		"The identity provider did not sign you in. Start again if that was a mistake."},
	OAuthNoEmail: {http.StatusForbidden, "No e-mail address",
		"The identity provider did not tell your e-mail address, which decides who may use this service."},
	OAuthUnverified: {http.StatusForbidden, "E-mail address not verified",
		"Your e-mail address is not verified with the identity provider. Verify it there, then sign in again."},
	OAuthNotAdmitted: {http.StatusForbidden, "Access denied",
		"Your account is not allowed to use this service. Ask its administrator to admit your e-mail address, domain or group."},
	OAuthIDToken: {http.StatusBadGateway, "Sign-in could not be verified",
		"The identity provider's answer could not be verified, so you were not signed in. The administrator will find the details in the service log."},
	OAuthProvider: {http.StatusBadGateway, "Identity provider unavailable",
		"The identity provider could not be reached or sent an answer that could not be used. Try again in a moment; if it persists, the administrator will find the details in the service log."},
	OAuthServer: {http.StatusInternalServerError, "Sign-in failed",
		"The sign-in could not be completed because of a server error."},
	OAuthLogoutToken: {http.StatusBadRequest, "Logout refused",
		"The logout was not carried out: %s."},
}

// Refusals returns every row of the catalogue, in its order.
func Refusals() []Refusal {
	all := make([]Refusal, 0, refusalEnd-1)
	for f := AskPassword; f < refusalEnd; f++ {
		all = append(all, f)
	}
	return all
}

func (f Refusal) row() refusalRow {
	if f == 0 || f >= refusalEnd {
		// An unknown refusal is a programming error; answer it as an
		// unexpected one rather than with an empty status.
		return catalogue[ServerError]
	}
	return catalogue[f]
}

// Status is the refusal's HTTP status.
func (f Refusal) Status() int { return f.row().status }

// Title is the title of the refusal's page, or "" when the page shows the
// status's text (most rows: only the OAuth sign-in's have titles).
func (f Refusal) Title() string { return f.row().title }

// Message is the refusal's sentence, with args in place of its %s.
func (f Refusal) Message(args ...any) string {
	m := f.row().message
	if len(args) == 0 {
		return m
	}
	return fmt.Sprintf(m, args...)
}

// Reply is the answer of the row f, args in place of the %s of its
// sentence, without Retry-After.
func (f Refusal) Reply(args ...any) Reply {
	return Reply{Refusal: f, Status: f.Status(), Message: f.Message(args...)}
}
