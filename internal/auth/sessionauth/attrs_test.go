package sessionauth

import (
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/attrs"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/session"
)

// TestHandlersCannotChangeStoredAttributes: the attributes a request's user
// carries are the stored session's own, shared without a copy, so nothing a
// handler can do with them may reach the store. Their type has no way to
// write in place (package attrs); a handler that replaces them, or the
// whole user, changes its own value only: the next request sees the
// stored attributes.
func TestHandlersCannotChangeStoredAttributes(t *testing.T) {
	for _, f := range []reflect.StructField{field[auth.User]("Attrs"), field[session.Data]("Attrs")} {
		if f.Type != reflect.TypeFor[attrs.Map]() {
			t.Fatalf("%s is a %v: a handler could write a stored session's attributes", f.Name, f.Type)
		}
	}
	stores := map[string]session.Store{
		"memory": session.NewMemoryStore(nil),
		// Another package's store, as Redis is to the manager.
		"remote": struct{ session.Store }{session.NewMemoryStore(nil)},
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			m, err := session.NewManager(session.Options{Store: store, Key: []byte(strings.Repeat("k", 32)), Type: "oauth"})
			if err != nil {
				t.Fatal(err)
			}
			g := New(Options{Type: "oauth", Manager: m, LoginPath: "/oauth/login"})
			w := httptest.NewRecorder()
			stored := attrs.Of(map[string]string{"email": "bob@example.org", auth.AttrSecondFactor: ""})
			if err := g.Begin(w, httptest.NewRequest("GET", "/oauth/callback", nil), session.Data{Username: "bob", Attrs: stored}); err != nil {
				t.Fatal(err)
			}
			cookie := w.Result().Cookies()[0]
			identify := func() auth.User {
				r := httptest.NewRequest("GET", "/", nil)
				r.AddCookie(cookie)
				u, ok, err := g.Identify(r)
				if err != nil || !ok {
					t.Fatalf("Identify: %v %v", ok, err)
				}
				return u
			}
			for range 3 {
				u := identify()
				if !u.Attrs.Equal(stored) || u.SecondFactor != "" {
					t.Fatalf("attributes %v, want %v", u.Attrs, stored)
				}
				// What a handler may do with its user: every change
				// makes a new value.
				u.Attrs = u.Attrs.With(auth.AttrSecondFactor, "totp").With("email", "admin@example.org")
				u.Attrs = u.Attrs.Without("email")
				u.Record()["email"] = "admin@example.org"
				u.Attrs.Clone()["email"] = "admin@example.org"
			}
		})
	}
}

func field[T any](name string) reflect.StructField {
	f, _ := reflect.TypeFor[T]().FieldByName(name)
	return f
}
