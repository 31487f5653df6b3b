package refusal

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// storeErr is an error of a session store that does not answer, as the
// Redis client's errors are: Unavailable and StoreDown.
type storeErr struct{}

func (storeErr) Error() string     { return "redis: find session: connection refused" }
func (storeErr) Unavailable() bool { return true }
func (storeErr) StoreDown() bool   { return true }

// busyErr is work at capacity: Unavailable only.
type busyErr struct{}

func (busyErr) Error() string     { return "password: busy" }
func (busyErr) Unavailable() bool { return true }

// fullErr is a full table of single-use tokens, as package once's
// FullError: Unavailable and TableFull, with room again in 5 minutes.
type fullErr struct{}

func (fullErr) Error() string          { return "once: the table is full" }
func (fullErr) Unavailable() bool      { return true }
func (fullErr) TableFull() bool        { return true }
func (fullErr) RetryIn() time.Duration { return 5 * time.Minute }

// TestReplyTo: the one table from error behaviours to what a client is
// told. A store that does not answer says so; "busy" stays for work at
// capacity; the detail of the error never reaches the sentence.
func TestReplyTo(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		status     int
		message    string
		retryAfter int
	}{
		{"store down", storeErr{}, 503, StoreNotAnswering.Message(), 1},
		{"store down, wrapped", fmt.Errorf("session: load: %w", storeErr{}), 503, StoreNotAnswering.Message(), 1},
		{"busy", busyErr{}, 503, Busy.Message(), 1},
		{"busy, wrapped", fmt.Errorf("login: %w", busyErr{}), 503, Busy.Message(), 1},
		{"throttled", &RetryError{After: 90 * time.Second}, 429, "Too many failed attempts. Try again in 2 minutes.", 90},
		{"too many begun", fmt.Errorf("login: %w", &RateError{After: time.Minute}), 429, "Too many sign-ins or passkey requests were started. Try again in 1 minute.", 60},
		{"table full", fmt.Errorf("login: %w", fullErr{}), 503, TokensFull.Message(), 300},
		{"unexpected", errors.New("disk on fire"), 500, "Authentication failed because of a server error.", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := ReplyTo(tc.err)
			if rp.Status != tc.status || rp.Message != tc.message || rp.RetryAfter != tc.retryAfter {
				t.Fatalf("ReplyTo = %+v, want %d %q Retry-After %d", rp, tc.status, tc.message, tc.retryAfter)
			}
			rec := httptest.NewRecorder()
			(&Errors{}).Error(rec, httptest.NewRequest("GET", "/api/me", nil), tc.err)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.message) || strings.Contains(rec.Body.String(), "connection refused") {
				t.Fatalf("Errors.Error answered %d %s", rec.Code, rec.Body.String())
			}
			if tc.retryAfter > 0 && rec.Header().Get("Retry-After") != strconv.Itoa(tc.retryAfter) {
				t.Fatalf("Retry-After %q, want %d", rec.Header().Get("Retry-After"), tc.retryAfter)
			}
		})
	}
}
