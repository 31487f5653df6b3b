package auth

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

// Sentences of the 503 replies: MsgStoreDown for a session store that does
// not answer, MsgBusy for work at capacity (bcrypt).
const (
	MsgStoreDown = "Sign-in is unavailable right now: the session store does not answer. Try again in a moment."
	MsgBusy      = "The server is busy. Try again in a moment."
)

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
}

// ReplyTo maps an error from Identify (or any authentication step) to its
// Reply, by behaviour: Throttled is 429 saying in how many minutes to try
// again, Unavailable is 503 (retry in a second) saying that the session
// store does not answer when the error is also StoreDown and that the
// server is busy otherwise, anything else 500.
func ReplyTo(err error) Reply {
	var t Throttled
	switch {
	case errors.As(err, &t):
		return Reply{Status: http.StatusTooManyRequests, RetryAfter: retryAfterSeconds(t.RetryAfter()),
			Message: "Too many failed attempts. Try again in " + inMinutes(t.RetryAfter()) + "."}
	case IsUnavailable(err) && IsStoreDown(err):
		return Reply{Status: http.StatusServiceUnavailable, RetryAfter: 1, Message: MsgStoreDown}
	case IsUnavailable(err):
		return Reply{Status: http.StatusServiceUnavailable, RetryAfter: 1, Message: MsgBusy}
	default:
		return Reply{Status: http.StatusInternalServerError, Message: "Authentication failed because of a server error.", Unexpected: true}
	}
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
// one rule: under /api/, on the forward-auth endpoints (/auth/…), or for a
// client whose Accept names application/json, the JSON body
// {"error": message}; otherwise the page Page renders. The web layer makes
// the program's (package web, NewErrors: the styled error page, the
// program's logger) and hands it to RequireAuth and every provider
// (Deps.Errors). The zero value writes plain text pages and logs nothing.
type Errors struct {
	// Logger receives unexpected errors. Nil: they are not logged.
	Logger *slog.Logger
	// Page writes the status and page of a refusal for a person. Nil:
	// the message as plain text.
	Page func(w http.ResponseWriter, r *http.Request, status int, message string)
}

// Refuse answers r with status and message.
func (e *Errors) Refuse(w http.ResponseWriter, r *http.Request, status int, message string) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Disposition")
	switch {
	case WantsJSON(r):
		h.Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": message})
	case e != nil && e.Page != nil:
		e.Page(w, r, status, message)
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
	if rp.Unexpected && e != nil && e.Logger != nil {
		e.Logger.ErrorContext(r.Context(), "auth: error", "path", r.URL.Path, "err", err)
	}
	e.Refuse(w, r, rp.Status, rp.Message)
}

// WantsJSON reports whether r gets JSON rather than a page: a path under
// /api/ or /auth/ (the forward-auth endpoints), or an Accept header that
// names application/json.
func WantsJSON(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/api/") || strings.HasPrefix(r.URL.Path, "/auth/") || wantsJSON(r)
}

func wantsJSON(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if containsMediaType(v, "application/json") {
			return true
		}
	}
	return false
}
