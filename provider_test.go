package backupweb_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/backupweb/backupweb"
	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/internal/testkit"
)

// testKey is a secret key long enough for the session types.
const testKey = "0123456789abcdef0123456789abcdef"

// lookup is an environment of its own for Options.LookupEnv.
func lookup(env map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) { v, ok := env[name]; return v, ok }
}

// writeFile writes a private file in dir and returns its path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestNewProviderRefuses(t *testing.T) {
	dir := t.TempDir()
	users := writeFile(t, dir, "users", "alice:secret\n")
	hashed := testkit.Hash(t, "secret")
	login := func(extra map[string]string) map[string]string {
		m := map[string]string{"users_file": users}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	session := backupweb.Options{SecretKey: testKey, StateDir: filepath.Join(dir, "state")}
	tests := []struct {
		name   string
		typ    string
		config map[string]string
		opts   backupweb.Options
		want   []string
	}{
		{"no type at all", "", map[string]string{"username": "a"}, backupweb.Options{},
			[]string{"no authentication type", "none, basic, flask-login, oauth"}},
		{"type key and typ disagree", "basic", map[string]string{"type": "none"}, backupweb.Options{},
			[]string{"[authentication] type:", `"basic"`}},
		{"unknown type", "kerberos", nil, backupweb.Options{},
			[]string{"[authentication] type:", `unknown authentication type "kerberos"`, "none, basic, flask-login, oauth"}},
		{"unset variable", "basic", map[string]string{"username": "a", "password": "${NOT_SET_HERE}"}, backupweb.Options{LookupEnv: lookup(nil)},
			[]string{"[authentication] password:", "NOT_SET_HERE is not set"}},
		{"one key in two letter cases", "basic", map[string]string{"username": "a", "Username": "b", "password": "p"}, backupweb.Options{},
			[]string{"[authentication] username:", "is given twice"}},
		{"key a file cannot hold", "basic", map[string]string{"username": "a", "password": "p", "realm = x": "y"}, backupweb.Options{},
			[]string{"[authentication] realm = x:", "is not a key"}},
		{"near miss of a key", "basic", map[string]string{"username": "a", "password": "p", "use_bycrypt": "yes"}, backupweb.Options{},
			[]string{"[authentication] use_bycrypt:", "did you mean use_bcrypt?"}},
		{"hash while use_bcrypt is off", "basic", map[string]string{"username": "a", "password": hashed}, backupweb.Options{},
			[]string{"[authentication] password:", "bcrypt"}},
		{"session type without a secret key", "flask-login", login(nil), backupweb.Options{StateDir: dir},
			[]string{"[authentication] type:", "Options.SecretKey", "gen-secret"}},
		{"short secret key", "flask-login", login(nil), backupweb.Options{SecretKey: "short", StateDir: dir},
			[]string{"Options.SecretKey is shorter than 32"}},
		{"session type without a state folder", "flask-login", login(nil), backupweb.Options{SecretKey: testKey},
			[]string{"Options.StateDir", "must not be empty"}},
		{"session type from the environment without a state folder", "", login(map[string]string{"type": "${AUTH_TYPE}"}),
			backupweb.Options{SecretKey: testKey, LookupEnv: lookup(map[string]string{"AUTH_TYPE": "oauth"})},
			[]string{"Options.StateDir", "must not be empty", "type oauth"}},
		{"missing user file", "flask-login", login(map[string]string{"users_file": filepath.Join(dir, "nobody")}), session,
			[]string{"[authentication] users_file:", "nobody"}},
		{"passkey login without a public URL", "flask-login", login(map[string]string{"second_factor": "optional", "passkey_login": "true"}), session,
			[]string{"[authentication] passkey_login: passkeys need Options.PublicURL"}},
		{"bad public URL", "basic", map[string]string{"username": "a", "password": "p"}, backupweb.Options{PublicURL: "backups.example.com"},
			[]string{"Options.PublicURL"}},
		{"oauth admitting nobody", "oauth", map[string]string{"provider": "github", "client_id": "i", "client_secret": "s", "redirect_uri": "https://b.example.com/oauth/callback"}, session,
			[]string{"authorized_domains"}},
		{"every error at once", "basic", map[string]string{"use_bycrypt": "yes", "password": "${NOT_SET_HERE}"}, backupweb.Options{LookupEnv: lookup(nil)},
			[]string{"invalid configuration:\n", "use_bycrypt:", "password:", "username:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := backupweb.NewProvider(tt.typ, tt.config, tt.opts)
			if err == nil {
				p.Close()
				t.Fatalf("NewProvider(%q) = nil error, want one holding %q", tt.typ, tt.want)
			}
			if p != nil {
				t.Errorf("NewProvider returned a provider with its error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not hold %q", err, w)
				}
			}
			if !strings.HasPrefix(err.Error(), "backupweb: ") {
				t.Errorf("error %q does not start with backupweb: ", err)
			}
			if strings.Contains(err.Error(), hashed) || strings.Contains(err.Error(), testKey) {
				t.Errorf("error %q shows a secret", err)
			}
		})
	}
}

func TestNewProviderAccepts(t *testing.T) {
	tests := []struct {
		name, typ string
		config    map[string]string
		want      string
	}{
		{"typ alone", "basic", map[string]string{"username": "a", "password": "p"}, "basic"},
		{"type key alone", "", map[string]string{"TYPE": "basic", "username": "a", "password": "p"}, "basic"},
		{"an alias agreeing with the name", "login", map[string]string{"type": "flask-login", "users_file": "USERS"}, "flask-login"},
		{"keys in any letter case, values trimmed", "basic", map[string]string{"UserName": " a ", "Password": "p", "Use_Bcrypt": "no"}, "basic"},
		{"type none named", "none", nil, "none"},
		{"type key from the environment", "", map[string]string{"type": "${AUTH_TYPE}", "users_file": "USERS"}, "flask-login"},
	}
	dir := t.TempDir()
	users := writeFile(t, dir, "users", "alice:secret\n")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.config["users_file"] == "USERS" {
				tt.config["users_file"] = users
			}
			p, err := backupweb.NewProvider(tt.typ, tt.config, backupweb.Options{SecretKey: testKey, StateDir: t.TempDir(),
				LookupEnv: lookup(map[string]string{"AUTH_TYPE": "flask-login"})})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if p.Type() != tt.want {
				t.Errorf("Type() = %q, want %q", p.Type(), tt.want)
			}
		})
	}
}

// TestSameMessagesAsCheckConfig checks that NewProvider refuses a map with
// the very messages check-config gives for the same keys in a file.
func TestSameMessagesAsCheckConfig(t *testing.T) {
	dir := t.TempDir()
	users := writeFile(t, dir, "users", "alice:secret\nbob\n")
	configs := []map[string]string{
		{"type": "basic", "username": "a"},
		{"type": "basic", "username": "a", "password": testkit.Hash(t, "p"), "realm": "r", "user_file": "x"},
		{"type": "flask-login", "users_file": users, "login_view": "//evil", "session_lifetime": "soon"},
		{"type": "oauth", "provider": "gitlub", "client_id": "i", "redirect_uri": "http://b.example.com/callback"},
		{"type": "basic", "username": "${UNSET_ONE}", "password": "${UNSET_TWO"},
	}
	env := map[string]string{app.SecretEnv: testKey}
	for _, cfg := range configs {
		var file strings.Builder
		file.WriteString("[server]\nstate_dir = " + filepath.Join(dir, "state") + "\n[backups]\ndir = " + dir + "\n[authentication]\n")
		for _, k := range slices.Sorted(mapsKeys(cfg)) {
			file.WriteString(k + " = " + cfg[k] + "\n")
		}
		path := writeFile(t, dir, "backupweb.ini", file.String())
		a := app.Check(path, app.Options{LookupEnv: lookup(env)})
		var want []string
		for _, p := range a.Config.Report.Problems() {
			if p.Severity == ini.Error {
				if p.File == path { // a map has no file and no lines
					p.File, p.Line = "", 0
				}
				want = append(want, strings.TrimPrefix(p.String(), "error: "))
			}
		}
		_, err := backupweb.NewProvider("", cfg, backupweb.Options{SecretKey: testKey, StateDir: filepath.Join(dir, "state"), LookupEnv: lookup(env)})
		if err == nil || len(want) == 0 {
			t.Fatalf("%v: NewProvider error %v, check-config errors %q: want both to refuse", cfg, err, want)
		}
		got := strings.Split(strings.TrimPrefix(strings.TrimPrefix(err.Error(), "backupweb: invalid configuration:\n"), "backupweb: "), "\n")
		if !slices.Equal(got, want) {
			t.Errorf("%v:\nNewProvider: %q\ncheck-config: %q", cfg, got, want)
		}
	}
}

// mapsKeys returns m's keys.
func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestReadConfig(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		text string // "" for no file at all
		want map[string]string
		err  []string
	}{
		{"no file", "", nil, []string{"cannot read the configuration file"}},
		{"no section is no type", "[server]\nlisten = 127.0.0.1:8080\n", nil, []string{"has no [authentication] section", "none must be named"}},
		{"an empty file", "\n", nil, []string{"has no [authentication] section"}},
		{"none named", "[authentication]\ntype = none\n", map[string]string{"type": "none"}, nil},
		{"keys as written", "[authentication]\nTYPE = basic\nusername = a\npassword = ${P}\n", map[string]string{"type": "basic", "username": "a", "password": "${P}"}, nil},
		{"keys from DEFAULT", "[DEFAULT]\nrealm = r\n[authentication]\ntype = basic\n", map[string]string{"type": "basic", "realm": "r"}, nil},
		{"section without type", "[authentication]\nusername = a\n", nil, []string{"[authentication]", "has no type key"}},
		{"section name in another case", "[Authentication]\ntype = basic\n", nil, []string{"[Authentication]", "write [authentication]"}},
		{"key under another header", "[server]\n# [authentication]\ntype = basic\n", nil, []string{"[server] type:", "commented out"}},
		{"a line that is no key", "[authentication]\ntype = basic\njunk\n", nil, []string{":3:"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "missing.ini")
			if tt.text != "" {
				path = writeFile(t, dir, "c"+string(rune('a'+i))+".ini", tt.text)
			}
			got, err := backupweb.ReadConfig(path)
			if tt.err == nil {
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(tt.want) {
					t.Errorf("ReadConfig = %v, want %v", got, tt.want)
				}
				for k, v := range tt.want {
					if got[k] != v {
						t.Errorf("ReadConfig[%q] = %q, want %q", k, got[k], v)
					}
				}
				return
			}
			if err == nil {
				t.Fatalf("ReadConfig = %v, nil error; want one holding %q", got, tt.err)
			}
			for _, w := range tt.err {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not hold %q", err, w)
				}
			}
		})
	}
	if _, err := backupweb.ReadConfig(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("ReadConfig(a folder) = %v, want an error saying it is a directory", err)
	}
}

// TestFlaskLogin signs in through the login page over loopback, reads the
// user with their groups, and signs out.
func TestFlaskLogin(t *testing.T) {
	dir := t.TempDir()
	users := writeFile(t, dir, "users", testkit.Users(t, map[string]string{"alice": "wonderland"}, "alice"))
	groups := writeFile(t, dir, "groups", "admins: alice\n")
	p, err := backupweb.NewProvider("flask-login", map[string]string{
		"users_file": users, "use_bcrypt": "true", "groups_file": groups,
	}, backupweb.Options{SecretKey: testKey, StateDir: filepath.Join(dir, "state")})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	mux := http.NewServeMux()
	p.Mount(mux)
	mux.Handle("GET /api/me", p.RequireAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := backupweb.CurrentUser(r)
		rec := u.Record()
		rec["groups"], rec["ok"] = u.Groups, ok
		json.NewEncoder(w).Encode(rec)
	})))
	mux.HandleFunc("GET /open", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := backupweb.CurrentUser(r); ok {
			t.Error("CurrentUser on a route without RequireAuth: ok")
		}
	})
	srv := httptest.NewServer(p.Handler(mux))
	defer srv.Close()
	c := testkit.Client()

	resp, err := c.Get(srv.URL + "/api/me")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /api/me before sign-in: %d, want 401", resp.StatusCode)
	}
	if r := testkit.Post(t, c, testkit.Login{Page: srv.URL + "/login", User: "alice", Password: "wrong"}); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d, want 401", r.StatusCode)
	}
	testkit.SignIn(t, c, testkit.Login{Page: srv.URL + "/login", User: "alice", Password: "wonderland"})
	resp, err = c.Get(srv.URL + "/api/me")
	if err != nil {
		t.Fatal(err)
	}
	var me map[string]any
	json.NewDecoder(resp.Body).Decode(&me)
	resp.Body.Close()
	if me["username"] != "alice" || me["auth_type"] != "flask-login" || me["ok"] != true || len(me["groups"].([]any)) != 1 {
		t.Errorf("GET /api/me after sign-in: %d %v, want alice of flask-login in admins", resp.StatusCode, me)
	}
	if resp, err = c.Get(srv.URL + "/open"); err == nil {
		resp.Body.Close()
	}

	tok := testkit.Token(t, c, srv.URL+"/logout")
	req, _ := http.NewRequest("POST", srv.URL+"/logout", strings.NewReader("csrf_token="+tok))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err = c.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST /logout: %d, want 303", resp.StatusCode)
	}
	if resp, err = c.Get(srv.URL + "/api/me"); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /api/me after logout: %d, want 401", resp.StatusCode)
	}
}

// TestHandler checks what Handler adds to every answer: the security
// headers, the cross-origin refusal and the body limit.
func TestHandler(t *testing.T) {
	p, err := backupweb.NewProvider("none", nil, backupweb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Mount(mux)
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) {
		if _, err := r.Body.Read(make([]byte, 1)); err != nil && err.Error() == "http: request body too large" {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
		}
	})
	srv := httptest.NewServer(p.Handler(mux))
	defer srv.Close()
	tests := []struct {
		name   string
		method string
		header map[string]string
		body   string
		want   int
	}{
		{"a page", "GET", nil, "", http.StatusOK},
		{"a post from the same site", "POST", map[string]string{"Sec-Fetch-Site": "same-origin"}, "a=b", http.StatusOK},
		{"a post from another site", "POST", map[string]string{"Sec-Fetch-Site": "cross-site"}, "a=b", http.StatusForbidden},
		{"a body over 64 KiB", "POST", nil, strings.Repeat("a", 64<<10+1), http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, srv.URL+"/form", strings.NewReader(tt.body))
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
			for _, h := range []string{"Content-Security-Policy", "X-Content-Type-Options", "Referrer-Policy", "X-Frame-Options"} {
				if resp.Header.Get(h) == "" {
					t.Errorf("no %s", h)
				}
			}
		})
	}
}
