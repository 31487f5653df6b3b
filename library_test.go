package backupweb_test

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/tokens"
)

// TestErrorsCallersCanTest: a missing file wraps fs.ErrNotExist; a file
// or a map without a type wraps ErrNoType; an unknown type ErrUnknownType;
// the session types without a secret key or state folder ErrNoSecretKey
// and ErrNoStateDir; every problem of a file is a *ConfigError with its
// file, line, section and key, several of them each reachable.
func TestErrorsCallersCanTest(t *testing.T) {
	dir := t.TempDir()
	_, err := backupweb.ReadConfig(filepath.Join(dir, "missing.ini"))
	var ce *backupweb.ConfigError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &ce) || ce.File == "" {
		t.Errorf("a missing file: %v; want a *ConfigError naming it that wraps fs.ErrNotExist", err)
	}
	_, err = backupweb.ReadConfig(writeFile(t, dir, "other.ini", "[server]\nlisten = :80\n"))
	if !errors.Is(err, backupweb.ErrNoType) || !errors.As(err, &ce) || !strings.HasSuffix(ce.File, "other.ini") {
		t.Errorf("a file without [authentication]: %v; want ErrNoType naming the file", err)
	}
	if _, err := backupweb.NewProvider("", map[string]string{"username": "a"}, backupweb.Options{}); !errors.Is(err, backupweb.ErrNoType) {
		t.Errorf("no type: %v, want ErrNoType", err)
	}
	_, err = backupweb.NewProvider("kerberos", nil, backupweb.Options{})
	if !errors.Is(err, backupweb.ErrUnknownType) || !errors.As(err, &ce) || ce.Key != "type" {
		t.Errorf("an unknown type: %v, want ErrUnknownType at the type key", err)
	}
	users := writeFile(t, dir, "users", testkit.Users(t, map[string]string{"alice": "wonderland"}, "alice"))
	login := map[string]string{"users_file": users, "use_bcrypt": "true"}
	if _, err := backupweb.NewProvider("flask-login", login, backupweb.Options{StateDir: t.TempDir()}); !errors.Is(err, backupweb.ErrNoSecretKey) {
		t.Errorf("no secret key: %v, want ErrNoSecretKey", err)
	}
	if _, err := backupweb.NewProvider("flask-login", login, backupweb.Options{SecretKey: strings.Repeat("k", 32)}); !errors.Is(err, backupweb.ErrNoStateDir) {
		t.Errorf("no state folder: %v, want ErrNoStateDir", err)
	}
	path := writeFile(t, dir, "bad.ini", "[authentication]\ntype = basic\nusername = a\npassword = b\nmax_failures = many\nfailure_window = soon\n")
	cfg, err := backupweb.ReadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = backupweb.NewProvider("", cfg, backupweb.Options{})
	var all interface{ Unwrap() []error }
	if !errors.As(err, &all) || len(all.Unwrap()) != 2 {
		t.Fatalf("two bad keys: %v; want two problems", err)
	}
	keys := map[string]bool{}
	for _, e := range all.Unwrap() {
		if errors.As(e, &ce) {
			keys[ce.Key] = ce.Section == "authentication"
		}
	}
	if !keys["max_failures"] || !keys["failure_window"] {
		t.Errorf("the problems name %v, want max_failures and failure_window in [authentication]", keys)
	}
}

// TestZeroAndNilRefuse: no method or function panics on a zero or nil
// value; a zero Provider refuses every request with 500; nil handlers and
// a nil mux are refused at once, naming the call.
func TestZeroAndNilRefuse(t *testing.T) {
	var zero backupweb.Provider
	var nilp *backupweb.Provider
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	for name, h := range map[string]http.Handler{
		"zero RequireAuth": zero.RequireAuth(ok), "nil RequireAuth": nilp.RequireAuth(ok),
		"zero Routes": zero.Routes(), "nil Routes": nilp.Routes(),
		"zero Handler": zero.Handler(ok),
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
		want := http.StatusInternalServerError
		if name == "zero Handler" {
			want = http.StatusTeapot // only headers and limits: no authentication to refuse
		}
		if rec.Code != want {
			t.Errorf("%s: %d, want %d", name, rec.Code, want)
		}
	}
	if err := nilp.Close(); err != nil {
		t.Errorf("nil Close: %v", err)
	}
	if err := zero.Close(); err != nil {
		t.Errorf("zero Close: %v", err)
	}
	if zero.Type() != "" || nilp.Type() != "" || zero.Paths() != nil {
		t.Error("a zero Provider names a type or paths")
	}
	zero.Mount(http.NewServeMux())
	if _, ok := backupweb.CurrentUser(nil); ok {
		t.Error("CurrentUser(nil) found a user")
	}
	if _, ok := backupweb.FromContext(context.Background()); ok {
		t.Error("FromContext of a bare context found a user")
	}
	p, err := backupweb.NewProvider("none", nil, backupweb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for call, f := range map[string]func(){
		"RequireAuth": func() { p.RequireAuth(nil) },
		"Handler":     func() { p.Handler(nil) },
		"Mount":       func() { p.Mount(nil) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), call) {
					t.Errorf("%s(nil): %v, want a refusal naming the call", call, r)
				}
			}()
			f()
		}()
	}
}

// TestPagesOnlyAsAsked: without Options the library mounts no account
// page and accepts no machine token; with AccountPage and MachineTokens
// it does.
func TestPagesOnlyAsAsked(t *testing.T) {
	dir := t.TempDir()
	users := writeFile(t, dir, "users", testkit.Users(t, map[string]string{"alice": "wonderland"}, "alice"))
	tokensFile := filepath.Join(dir, "tokens")
	cfg := map[string]string{"users_file": users, "use_bcrypt": "true", "tokens_file": tokensFile}
	tok := &tokens.Token{User: "alice"}
	secret, err := tokens.New(tok, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := tokens.Edit(tokensFile, func(d *tokens.Doc) error { d.Add(tok); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{false, true} {
		p, err := backupweb.NewProvider("flask-login", cfg, backupweb.Options{SecretKey: strings.Repeat("k", 32), StateDir: t.TempDir(), AccountPage: on, MachineTokens: on})
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		p.Mount(mux)
		mux.Handle("GET /{$}", p.RequireAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
		srv := httptest.NewServer(p.Handler(mux))
		c := testkit.Client()
		testkit.SignIn(t, c, testkit.Login{Page: srv.URL + "/login", User: "alice", Password: "wonderland"})
		resp, err := c.Get(srv.URL + "/_backupweb/account")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.StatusCode == http.StatusOK; got != on {
			t.Errorf("AccountPage %v: the account page answers %d", on, resp.StatusCode)
		}
		req, _ := http.NewRequest("GET", srv.URL+"/", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.StatusCode == http.StatusOK; got != on {
			t.Errorf("MachineTokens %v: a request with a token answers %d", on, resp.StatusCode)
		}
		srv.Close()
		p.Close()
	}
}
