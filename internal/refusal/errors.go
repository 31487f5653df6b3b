package refusal

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Unavailable is the behaviour of errors that mean something the answer
// depends on cannot be reached or is saturated for now (bcrypt work at
// capacity, a shared store down): the client should retry shortly, and is
// answered 503 with Retry-After, never admitted and never told it is
// signed out. Errors are recognised by this method, wherever they come
// from, not by sentinel values.
type Unavailable interface {
	Unavailable() bool
}

// IsUnavailable reports whether err, or an error it wraps, is Unavailable.
func IsUnavailable(err error) bool {
	var u Unavailable
	return errors.As(err, &u) && u.Unavailable()
}

// StoreDown is the behaviour of Unavailable errors whose cause is the
// shared store that keeps sessions and failure counts (Redis) not
// answering. They are answered like any Unavailable error (503 with
// Retry-After) but with a sentence that says what is down, so that a user
// is not told the server is busy when it is not.
type StoreDown interface {
	StoreDown() bool
}

// IsStoreDown reports whether err, or an error it wraps, is StoreDown.
func IsStoreDown(err error) bool {
	var d StoreDown
	return errors.As(err, &d) && d.StoreDown()
}

// DirectoryDown is the behaviour of Unavailable errors whose cause is the
// directory users sign in against ([ldap]) not answering in time or not
// verifiably: answered 503 with Retry-After and a sentence that names the
// directory, never with a verdict on the password.
type DirectoryDown interface {
	DirectoryDown() bool
}

// DirectoryRetry is the Retry-After of a directory that does not answer.
const DirectoryRetry = 5 * time.Second

// TableFull is the behaviour of Unavailable errors whose cause is a full
// table of single-use tokens (package once): answered 503 with the
// TokensFull sentence and Retry-After the time RetryIn says, when the
// table has room again.
type TableFull interface {
	TableFull() bool
	RetryIn() time.Duration
}

// RateLimited is the behaviour of Throttled errors that refuse a client
// for starting too many sign-ins or ceremonies, not for failing: answered
// 429 with the TooManyBegun sentence.
type RateLimited interface {
	RateLimited() bool
}

// RateError is the RateLimited error of the begin limits (throttle.Rate, the limit on begins).
type RateError struct {
	After time.Duration
}

func (e *RateError) Error() string {
	return fmt.Sprintf("auth: too many sign-ins or ceremonies begun; retry in %s", e.After.Round(time.Second))
}

// RetryAfter is how long the client must wait.
func (e *RateError) RetryAfter() time.Duration { return e.After }

// RateLimited reports true.
func (e *RateError) RateLimited() bool { return true }

// InvalidToken is the behaviour of errors that refuse a bearer token
// (unknown, altered, expired, revoked): answered 401 with the
// TokenRefused sentence and WWW-Authenticate: Bearer error="invalid_token"
// (RFC 6750, section 3), never with a redirect to a login page.
type InvalidToken interface {
	InvalidToken() bool
}

// TokenError is the InvalidToken error of a refused machine token. Reason
// is the refusal's reason as logged (already logged by whoever returns
// it).
type TokenError struct {
	Reason string
}

func (e *TokenError) Error() string { return "auth: the bearer token was refused: " + e.Reason }

// InvalidToken reports true.
func (e *TokenError) InvalidToken() bool { return true }

// bearerInvalid is the WWW-Authenticate value of a refused bearer token.
const bearerInvalid = `Bearer error="invalid_token"`

// Throttled is the behaviour of errors that mean the client must wait
// before trying again (too many failed attempts from its address or for
// its user name): answered 429 with Retry-After.
type Throttled interface {
	RetryAfter() time.Duration
}

// RetryError is the Throttled error the providers return.
type RetryError struct {
	After time.Duration
}

func (e *RetryError) Error() string {
	return fmt.Sprintf("auth: too many failed attempts; retry in %s", e.After.Round(time.Second))
}

// RetryAfter is how long the client must wait.
func (e *RetryError) RetryAfter() time.Duration { return e.After }

// Reply is how an error is answered: the one table from error kinds to
// what a client is told (see ReplyTo).
type Reply struct {
	// Refusal is the catalogue's row the answer comes from.
	Refusal Refusal
	// Status is the HTTP status.
	Status int
	// Message is the sentence a person is shown; the detail stays in the
	// logs.
	Message string
	// RetryAfter, when above zero, is the Retry-After header, in whole
	// seconds (rounded up).
	RetryAfter int
	// Unexpected tells that the error is none of the known kinds: it is
	// logged at error level.
	Unexpected bool
	// Challenge, when set, is the WWW-Authenticate header of the answer.
	Challenge string
}

// ReplyTo maps an error from auth.Provider.Identify (or any authentication step) to its
// Reply, by behaviour: Throttled is 429 saying in how many minutes to try
// again (for failures, or for too many begun when it is also
// RateLimited), InvalidToken is 401 with a Bearer challenge, Unavailable is 503 saying that the session store does not
// answer when the error is also StoreDown (retry in a second), that the
// directory does not answer when it is DirectoryDown (retry in
// DirectoryRetry), that too
// many sign-ins are in progress when it is TableFull (retry when it has
// room), and that the server is busy otherwise, anything else 500.
func ReplyTo(err error) Reply {
	var t Throttled
	var rl RateLimited
	var full TableFull
	var dir DirectoryDown
	var bad InvalidToken
	switch {
	case errors.As(err, &bad) && bad.InvalidToken():
		rp := reply(TokenRefused, 0)
		rp.Challenge = bearerInvalid
		return rp
	case errors.As(err, &t) && errors.As(err, &rl) && rl.RateLimited():
		return reply(TooManyBegun, retryAfterSeconds(t.RetryAfter()), inMinutes(t.RetryAfter()))
	case errors.As(err, &t):
		return reply(TooManyAttempts, retryAfterSeconds(t.RetryAfter()), inMinutes(t.RetryAfter()))
	case IsUnavailable(err) && errors.As(err, &full) && full.TableFull():
		return reply(TokensFull, retryAfterSeconds(full.RetryIn()))
	case IsUnavailable(err) && IsStoreDown(err):
		return reply(StoreNotAnswering, 1)
	case IsUnavailable(err) && errors.As(err, &dir) && dir.DirectoryDown():
		return reply(DirectoryNotAnswering, retryAfterSeconds(DirectoryRetry))
	case IsUnavailable(err):
		return reply(Busy, 1)
	default:
		rp := reply(ServerError, 0)
		rp.Unexpected = true
		return rp
	}
}

func reply(f Refusal, retryAfter int, args ...any) Reply {
	rp := f.Reply(args...)
	rp.RetryAfter = retryAfter
	return rp
}

// SetRetryAfter sets the Retry-After header of rp, if it has one.
func (rp Reply) SetRetryAfter(h http.Header) {
	if rp.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(rp.RetryAfter))
	}
}

// retryAfterSeconds is d in whole seconds, rounded up, at least 1.
func retryAfterSeconds(d time.Duration) int {
	return max(int(math.Ceil(d.Seconds())), 1)
}

// inMinutes says how long d is for a person: "1 minute", "15 minutes",
// rounded up, at least one minute.
func inMinutes(d time.Duration) string {
	m := int(math.Ceil(d.Minutes()))
	if m <= 1 {
		return "1 minute"
	}
	return strconv.Itoa(m) + " minutes"
}

// Errors writes every refusal and error response of the program, under
// one rule: under one of JSONPaths, or for a client whose Accept names
// application/json, the JSON body {"error": message}; otherwise the page
// Page renders. The web layer makes the program's (package web,
// NewErrors: the styled error page, the program's logger, /api/ and the
// forward-auth endpoints as JSON paths) and hands it to auth.RequireAuth
// and every provider (auth.Deps.Errors). The zero value writes plain text pages,
// JSON only to clients that ask for it, and logs nothing.
type Errors struct {
	// Logger receives unexpected errors. Nil: they are not logged.
	Logger *slog.Logger
	// Page writes the status and page of a refusal for a person: title is
	// the page's heading ("" for the status's text). Nil: the message as
	// plain text.
	Page func(w http.ResponseWriter, r *http.Request, status int, title, message string)
	// JSONPaths are the path prefixes ("/api/") whose refusals are JSON
	// whatever the client's Accept says: the caller knows its routes.
	JSONPaths []string
}

// Refuse answers r with the catalogue's row f, args in place of the %s of
// its sentence.
func (e *Errors) Refuse(w http.ResponseWriter, r *http.Request, f Refusal, args ...any) {
	e.Send(w, r, f.Reply(args...))
}

// Send answers r with rp's status, title and sentence, as JSON or a page
// (see Errors). Its Retry-After is the caller's to set (Reply.SetRetryAfter),
// before. Callers with a page of their own (the login form) use it for the
// clients that want JSON.
func (e *Errors) Send(w http.ResponseWriter, r *http.Request, rp Reply) {
	status, title, message := rp.Status, rp.Refusal.Title(), rp.Message
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Disposition")
	switch {
	case e.WantsJSON(r):
		h.Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": message})
	case e != nil && e.Page != nil:
		e.Page(w, r, status, title, message)
	default:
		h.Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprintln(w, message)
	}
}

// Error answers r with the Reply for err (ReplyTo), Retry-After included,
// and logs the error when it is unexpected. A client that went away gets
// nothing.
func (e *Errors) Error(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return
	}
	rp := ReplyTo(err)
	rp.SetRetryAfter(w.Header())
	if rp.Challenge != "" {
		w.Header().Set("WWW-Authenticate", rp.Challenge)
	}
	if rp.Unexpected && e != nil && e.Logger != nil {
		e.Logger.ErrorContext(r.Context(), "auth: error", "path", r.URL.Path, "err", err)
	}
	e.Send(w, r, rp)
}

// WantsJSON reports whether r gets JSON rather than a page: a path under
// one of e's JSONPaths, or an Accept header that names application/json.
// A nil e looks at Accept only.
func (e *Errors) WantsJSON(r *http.Request) bool {
	if e != nil {
		for _, p := range e.JSONPaths {
			if strings.HasPrefix(r.URL.Path, p) {
				return true
			}
		}
	}
	return Accepts(r, "application/json")
}
