package app

import (
	"cmp"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/passwordauth"
	"github.com/backupweb/backupweb/internal/auth/sessionauth"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/internal/session"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/tokens"
)

// loadLoginSection parses an [authentication] section and runs loadLogin
// on it, with no state folder: the factors and tokens files default to
// their places beside the user file.
func loadLoginSection(t *testing.T, body string) (login.Config, bool, []ini.Problem) {
	t.Helper()
	return loadTypeSection(t, "flask-login", body, func(s *ini.Section) (login.Config, bool) { return loadLogin(s, &loadEnv{}) })
}

// loadTypeSection parses an [authentication] section of type typ with
// body and runs the type's loader on it: its configuration, whether it
// is usable, and the problems reported.
func loadTypeSection[C any](t *testing.T, typ, body string, load func(*ini.Section) (C, bool)) (C, bool, []ini.Problem) {
	t.Helper()
	rep := &ini.Report{}
	f := ini.Parse("backupweb.ini", strings.NewReader("[authentication]\ntype = "+typ+"\n"+body), rep)
	cfg, ok := load(f.Section("authentication"))
	return cfg, ok, rep.Problems()
}

// testPasswords are the passwords of the users usersText writes.
var testPasswords = map[string]string{"alice": "alice-pw", "bob": "bob-pw"}

// usersText is a user file with the named users and their test hashes.
func usersText(t testing.TB, names ...string) string {
	return testkit.Users(t, testPasswords, names...)
}

// writeFile writes text to path, private to its owner.
func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// loginPage is a replacement login page with every field the form posts.
const loginPage = `<!doctype html>
<title>{{.Title}}</title>
<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf_token" value="{{.CSRFToken}}">
<input type="hidden" name="next" value="{{.Next}}">
<label>Name <input name="username" value="{{.Username}}"></label>
<label>Password <input name="password" type="password"></label>
<button>Sign in</button>
</form>
`

// sameExported reports whether a and b, structs of one type, agree on
// every exported field (what was read for New is left aside).
func sameExported(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		if va.Type().Field(i).IsExported() && !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return false
		}
	}
	return true
}

func TestLoadDefaults(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	writeFile(t, users, usersText(t, "alice"))
	cfg, ok, problems := loadLoginSection(t, "users_file = "+users+"\nuse_bcrypt = True\n")
	if !ok {
		t.Fatalf("loadLogin refused: %v", problems)
	}
	want := login.Config{
		UsersFrom: login.UsersFromFile, UsersFile: users, UseBcrypt: true, LoginPath: "/login",
		Settings:        sessionauth.Settings{IdleTimeout: 30 * time.Minute, Lifetime: 12 * time.Hour, MaxSessionsPerUser: 20},
		Throttling:      passwordauth.Throttling{MaxFailures: 10, FailureWindow: 15 * time.Minute},
		MaxUserFailures: 5,
		FactorsFile:     users + factors.Suffix, TokensFile: users + tokens.Suffix,
		PollInterval: login.DefaultPollInterval,
	}
	if !sameExported(cfg, want) {
		t.Errorf("loadLogin = %+v\nwant %+v", cfg, want)
	}
}

func TestLoadAllKeys(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	writeFile(t, users, usersText(t, "alice"))
	tmpl := filepath.Join(dir, "login.html")
	if err := os.WriteFile(tmpl, []byte(loginPage), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, ok, problems := loadLoginSection(t, strings.Join([]string{
		"users_file = " + users, "use_bcrypt = yes", "login_view = /signin", "login_template = " + tmpl,
		"session_idle_timeout = 10m", "session_lifetime = 2h", "max_failures = 20",
		"max_user_failures = 3", "failure_window = 600", "max_sessions_per_user = 4",
		"attempt_wait = 3s",
		"idle_renewal = any",
	}, "\n"))
	if !ok {
		t.Fatalf("loadLogin refused: %v", problems)
	}
	want := login.Config{
		UsersFrom: login.UsersFromFile, UsersFile: users, UseBcrypt: true, LoginPath: "/signin", LoginTemplate: tmpl,
		Settings:        sessionauth.Settings{IdleTimeout: 10 * time.Minute, Lifetime: 2 * time.Hour, MaxSessionsPerUser: 4, IdleRenewal: session.RenewAny},
		Throttling:      passwordauth.Throttling{MaxFailures: 20, FailureWindow: 10 * time.Minute, AttemptWait: 3 * time.Second},
		MaxUserFailures: 3,
		// Not keys of the file: the type's defaults, beside the user file.
		FactorsFile: users + factors.Suffix, TokensFile: users + tokens.Suffix,
		PollInterval: login.DefaultPollInterval,
	}
	if !sameExported(cfg, want) {
		t.Errorf("loadLogin = %+v\nwant %+v", cfg, want)
	}
}

func TestLoadProblems(t *testing.T) {
	dir := t.TempDir()
	const secretLine = "carol-Plain-Secret"
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", usersText(t, "alice"), 0o600)
	salt := testkit.Hash(t, testPasswords["alice"])[7:29]
	malformed := write("malformed", usersText(t, "alice")+secretLine+"\n", 0o600)
	duplicate := write("duplicate", usersText(t, "alice", "alice"), 0o600)
	apr1 := write("apr1", "alice:$apr1$"+secretLine+"\n", 0o600)
	plainInBcrypt := write("plain", "carol:"+secretLine+"\n", 0o600)
	empty := write("empty", "# nobody yet\n", 0o600)
	open := write("open", usersText(t, "alice"), 0o644)
	tests := []struct {
		name     string
		body     string
		ok       bool
		severity ini.Severity
		where    string // "FILE:LINE", "FILE" or "backupweb.ini:LINE"
		msg      string
	}{
		{"missing key", "use_bcrypt = true", false, ini.Error, "backupweb.ini:1", "users_file: missing required key"},
		{"missing file", "users_file = " + filepath.Join(dir, "nope"), false, ini.Error, "backupweb.ini:3", "no such file"},
		{"malformed line", "users_file = " + malformed + "\nuse_bcrypt = true", false, ini.Error, malformed + ":4", "malformed line"},
		{"duplicate user", "users_file = " + duplicate + "\nuse_bcrypt = true", false, ini.Error, duplicate + ":4", "duplicate user name"},
		{"other hash kind", "users_file = " + apr1 + "\nuse_bcrypt = true", false, ini.Error, apr1 + ":1", "$apr1$"},
		{"plain value with bcrypt", "users_file = " + plainInBcrypt + "\nuse_bcrypt = true", false, ini.Error, plainInBcrypt + ":1", "not a hash"},
		{"empty file", "users_file = " + empty + "\nuse_bcrypt = true", false, ini.Error, empty, "no users"},
		{"plain passwords", "users_file = " + plainInBcrypt, true, ini.Warning, "backupweb.ini", "passwords are stored in plain text"},
		{"bcrypt hash with bcrypt off", "users_file = " + good, false, ini.Error, good + ":3", "use_bcrypt is off, so the hash itself would be accepted"},
		{"readable by others", "users_file = " + open + "\nuse_bcrypt = true", true, ini.Warning, open, "chmod 600"},
		{"weak cost", "users_file = " + good + "\nuse_bcrypt = true", true, ini.Warning, good + ":3", "bcrypt cost 4 is weak"},
		{"idle longer than lifetime", "users_file = " + good + "\nuse_bcrypt = true\nsession_idle_timeout = 2h\nsession_lifetime = 1h", true, ini.Warning, "backupweb.ini:5", "longer than session_lifetime"},
		{"bad duration", "users_file = " + good + "\nuse_bcrypt = true\nfailure_window = soon", false, ini.Error, "backupweb.ini:5", "failure_window"},
		{"attempt_wait too long", "users_file = " + good + "\nuse_bcrypt = true\nattempt_wait = 30s", false, ini.Error, "backupweb.ini:5", "attempt_wait: must be at most 25s"},
		{"bad number", "users_file = " + good + "\nuse_bcrypt = true\nmax_user_failures = 0", false, ini.Error, "backupweb.ini:5", "max_user_failures"},
		{"bad idle renewal", "users_file = " + good + "\nuse_bcrypt = true\nidle_renewal = always", false, ini.Error, "backupweb.ini:5", "idle_renewal: unknown value \"always\"; valid values are navigation"},
		{"bad login view", "users_file = " + good + "\nuse_bcrypt = true\nlogin_view = /api/x", false, ini.Error, "backupweb.ini:5", "login_view"},
		{"missing template", "users_file = " + good + "\nuse_bcrypt = true\nlogin_template = " + filepath.Join(dir, "none.html"), false, ini.Error, "backupweb.ini:5", "login_template"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ok, problems := loadLoginSection(t, tt.body)
			if ok != tt.ok {
				t.Errorf("ok = %v, want %v; problems: %v", ok, tt.ok, problems)
			}
			found := false
			for _, p := range problems {
				s := p.String()
				if strings.Contains(s, secretLine) || strings.Contains(s, salt) {
					t.Errorf("problem repeats file content: %s", s)
				}
				if p.Severity == tt.severity && strings.Contains(s, tt.where+":") && strings.Contains(s, tt.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s at %s mentioning %q in %v", tt.severity, tt.where, tt.msg, problems)
			}
		})
	}
}

func TestLoadSecondFactor(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	writeFile(t, users, usersText(t, "alice", "bob"))
	custom := filepath.Join(dir, "custom.factors")
	broken := filepath.Join(dir, "broken.factors")
	os.WriteFile(broken, []byte("alice:{\"totp\":\n"), 0o600)
	open := filepath.Join(dir, "open.factors")
	os.WriteFile(open, []byte("# none yet\n"), 0o644)
	tests := []struct {
		name     string
		body     string
		ok       bool
		mode     login.SecondFactor
		file     string
		problems []string
	}{
		{"default off", "", true, login.SecondFactorOff, users + factors.Suffix, nil},
		{"off", "second_factor = off\n", true, login.SecondFactorOff, users + factors.Suffix, nil},
		{"optional", "second_factor = optional\n", true, login.SecondFactorOptional, users + factors.Suffix, nil},
		{"required, any case", "second_factor = Required\n", true, login.SecondFactorRequired, users + factors.Suffix, nil},
		{"bad value", "second_factor = yes\n", false, login.SecondFactorOff, "", []string{"second_factor: must be off, optional or required"}},
		{"inline comment, as once pasted from the docs", "second_factor = optional      ; or required\n", false, login.SecondFactorOff, "", []string{"second_factor: must be off, optional or required; the value contains \" #\" or \" ;\", which looks like an inline comment"}},
		{"factors_file", "second_factor = optional\nfactors_file = " + custom + "\n", true, login.SecondFactorOptional, custom, nil},
		{"broken line warns", "second_factor = optional\nfactors_file = " + broken + "\n", true, login.SecondFactorOptional, broken, []string{broken + ":1", "cannot sign in until the line is fixed"}},
		{"readable by others warns", "second_factor = required\nfactors_file = " + open + "\n", true, login.SecondFactorRequired, open, []string{open}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, ok, problems := loadLoginSection(t, "users_file = "+users+"\nuse_bcrypt = True\n"+tt.body)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v: %v", ok, tt.ok, problems)
			}
			var all []string
			for _, p := range problems {
				all = append(all, p.String())
			}
			text := strings.Join(all, "\n")
			for _, want := range tt.problems {
				if !strings.Contains(text, want) {
					t.Errorf("no problem mentioning %q:\n%s", want, text)
				}
			}
			if !tt.ok {
				return
			}
			file := cmp.Or(cfg.FactorsFile, factors.DefaultPath(cfg.UsersFile))
			if cfg.SecondFactor != tt.mode || file != tt.file {
				t.Errorf("mode %v file %q, want %v %q", cfg.SecondFactor, file, tt.mode, tt.file)
			}
		})
	}
}

func TestTemplateProblems(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	writeFile(t, users, usersText(t, "alice"))
	tests := []struct {
		name, text string
		severity   ini.Severity
		msg        string
	}{
		{"syntax error", "<p>{{.Title</p>", ini.Error, "login template"},
		{"unknown field", "<p>{{.Token}}</p>", ini.Error, "fails with the login page's data"},
		{"missing next", strings.Replace(loginPage, `name="next"`, `name="then"`, 1), ini.Warning, "no form field named next"},
		{"missing csrf_token", strings.Replace(loginPage, `name="csrf_token"`, `name="token"`, 1), ini.Error, "no form field named csrf_token, so it could never sign anyone in"},
		{"missing password", strings.Replace(loginPage, `name="password"`, `name="pw"`, 1), ini.Error, "no form field named password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".html")
			if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, ok, problems := loadLoginSection(t, "users_file = "+users+"\nuse_bcrypt = true\nlogin_template = "+path)
			if ok != (tt.severity == ini.Warning) {
				t.Errorf("ok = %v", ok)
			}
			found := false
			for _, p := range problems {
				if p.Severity == tt.severity && p.Key == "login_template" && strings.Contains(p.Msg, tt.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s mentioning %q in %v", tt.severity, tt.msg, problems)
			}
		})
	}
}
