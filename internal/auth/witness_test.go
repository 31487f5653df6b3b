package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestWitness: RequireAuth records the admitted user in the request's
// witness; a witness that carries the user answers FromContext and the
// request passes inward unchanged, one that does not gets the usual copy
// with the user in its context; a refused request leaves both empty.
func TestWitness(t *testing.T) {
	for _, carry := range []bool{false, true} {
		for _, user := range []string{"alice", ""} {
			w := &Witness{}
			if carry {
				w.CarryUser()
			}
			r := httptest.NewRequest("GET", "/", nil)
			r = r.WithContext(Witnessed(r.Context(), w))
			if user != "" {
				r.Header.Set("X-User", user)
			}
			outer := r
			var inner *http.Request
			var got User
			var found bool
			h := RequireAuth(fakeProvider{}, testErrs, Audit{})(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				inner = r
				got, found = FromContext(r.Context())
			}))
			h.ServeHTTP(httptest.NewRecorder(), r)
			admitted, ok := w.Admitted()
			if user == "" {
				if inner != nil || ok {
					t.Errorf("carry %v: a refused request reached the handler or was witnessed", carry)
				}
				if _, found := FromContext(r.Context()); found {
					t.Errorf("carry %v: a user in the context of a refused request", carry)
				}
				continue
			}
			if !found || got.Name != user || !ok || admitted.Name != user {
				t.Errorf("carry %v: handler saw %q (%v), witness %q (%v)", carry, got.Name, found, admitted.Name, ok)
			}
			if carry != (inner == outer) {
				t.Errorf("carry %v: request passed unchanged: %v", carry, inner == outer)
			}
		}
	}
	if _, found := FromContext(httptest.NewRequest("GET", "/", nil).Context()); found {
		t.Error("a user in a context without RequireAuth")
	}
}
