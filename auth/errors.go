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

	"github.com/backupweb/backupweb/ui"
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

// RetryError means the client must wait before trying again: too many
// failed attempts from its address or for its user name. Answered with 429
// and a Retry-After header.
type RetryError struct {
	After time.Duration
}

func (e *RetryError) Error() string {
	return fmt.Sprintf("auth: too many failed attempts; retry in %s", e.After.Round(time.Second))
}

// RetryAfterSeconds is the Retry-After value: whole seconds, rounded up,
// at least 1.
func (e *RetryError) RetryAfterSeconds() int {
	s := int(math.Ceil(e.After.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}

// StatusOf maps an error from Identify (or any authentication step) to an
// HTTP status and the sentence a person is shown. It is the one table from
// error kinds to statuses; the detail stays in the logs.
func StatusOf(err error) (status int, message string) {
	var retry *RetryError
	switch {
	case errors.As(err, &retry):
		return http.StatusTooManyRequests, "Too many failed attempts. Try again in " + inMinutes(retry.After) + "."
	case IsUnavailable(err):
		return http.StatusServiceUnavailable, "The server is busy. Try again in a moment."
	default:
		return http.StatusInternalServerError, "Authentication failed because of a server error."
	}
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

// WriteError answers r with the status StatusOf gives for err, sets
// Retry-After where it applies, and logs unexpected errors.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := StatusOf(err)
	var retry *RetryError
	switch {
	case errors.As(err, &retry):
		w.Header().Set("Retry-After", strconv.Itoa(retry.RetryAfterSeconds()))
	case status == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "1")
	default:
		slog.ErrorContext(r.Context(), "auth error", "path", r.URL.Path, "err", err)
	}
	Refuse(w, r, status, msg)
}

// Refuse writes an error response under the one rule every refusal and
// error follows: under /api/, on the forward-auth endpoints (/auth/…), or
// for a client whose Accept names application/json, the JSON body
// {"error": message}; otherwise the styled error page (package ui, the
// same stylesheet as every page), with a link back to the backups.
func Refuse(w http.ResponseWriter, r *http.Request, status int, message string) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Disposition")
	if WantsJSON(r) {
		h.Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": message})
		return
	}
	ui.Render(w, status, "error", ui.ErrorPage{Status: status, Message: message})
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
