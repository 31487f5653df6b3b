package app

import (
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/certtest"
	"github.com/backupweb/backupweb/internal/testkit/logtest"
)

// reloadBase are the [authentication] keys each type starts with in
// TestReloadEveryKey; DIR stands for the test's folder.
var reloadBase = map[string]map[string]string{
	"none":  {},
	"basic": {"username": "alice", "password": "a long enough password", "use_bcrypt": "false"},
	"flask-login": {"users_file": "DIR/users", "use_bcrypt": "true", "second_factor": "optional",
		"groups_file": "DIR/groups"},
	"oauth": {"provider": "generic", "client_id": "c", "client_secret": "s3cr3t-value",
		"redirect_uri": "https://backups.example.com/oauth/callback", "authorized_domains": "example.com",
		"authorization_endpoint": "https://idp.example.com/auth", "token_endpoint": "https://idp.example.com/token",
		"userinfo_endpoint": "https://idp.example.com/userinfo"},
}

// reloadValue is, for every key of the table of types and of the
// sections, a second good value for the base configuration: a key missing
// here fails the test, so a new key cannot go unclassified.
var reloadValue = map[string]string{
	// [authentication], by type where they differ.
	"basic.username": "bob", "basic.password": "another long password", "basic.use_bcrypt": "False",
	"basic.realm": "Backups", "basic.cache_ttl": "1m", "basic.groups_file": "DIR/groups",
	"users": "file", "users_file": "DIR/users2", "flask-login.use_bcrypt": "True", "login_view": "/signin",
	"login_template": "DIR/login.html", "session_idle_timeout": "5m", "idle_renewal": "any",
	"session_lifetime": "1h", "max_sessions_per_user": "3", "max_failures": "3",
	"failure_window": "1h", "attempt_wait": "2s", "max_user_failures": "2",
	"second_factor": "required", "factors_file": "DIR/other.factors", "tokens_file": "DIR/other.tokens", "flask-login.groups_file": "DIR/groups2",
	"passkey_login": "true", "known_address_days": "7",
	"provider": "github", "client_id": "c2", "client_secret": "an0ther-s3cr3t", "redirect_uri": "https://backups2.example.com/oauth/callback",
	"authorized_domains": "example.org", "authorized_users": "a@example.com", "authorized_orgs": "acme",
	"authorized_teams": "acme/ops", "authorized_groups": "ops", "groups_claim": "roles",
	"authorization_endpoint": "https://idp.example.com/auth2", "token_endpoint": "https://idp.example.com/token2",
	"userinfo_endpoint": "https://idp.example.com/userinfo2", "scopes": "openid email", "issuer": "https://idp.example.com",
	"base_url": "https://gitlab.example.com", "end_session_endpoint": "https://idp.example.com/logout2",
	"post_logout_redirect_uri": "https://backups2.example.com/",
	// The sections.
	"server.listen": "127.0.0.1:1", "server.trusted_proxies": "10.0.0.1", "server.state_dir": "DIR/state2",
	"server.access_log": "false", "server.metrics_listen": "127.0.0.1:0", "server.pprof": "true",
	"server.pprof_public":  "true",
	"server.cookie_domain": "example.com", "server.store": "redis", "server.mode": "proxy",
	"server.public_url": "https://backups.example.com",
	"server.tls_cert":   "DIR/tls2.crt", "server.tls_key": "DIR/tls2.key", "server.tls_min_version": "1.3",
	"server.hsts": "false", "server.redirect_http_listen": "127.0.0.1:0",
	"server.acme_domains": "backups.example.com", "server.acme_email": "ops@example.com",
	"server.acme_ca": "https://acme.example.com/directory", "server.acme_ca_root": "DIR/tls.crt",
	"backups.dir": "DIR/backups2", "backups.max_age": "24h",
	"backups.shrink_ratio": "0.3", "backups.shrink_window": "3", "backups.verify_every": "1h", "backups.verify_rate": "10MB/s",
	"proxy.upstream": "http://127.0.0.1:2", "proxy.user_header": "X-Who", "proxy.email_header": "X-Mail",
	"proxy.pass_authorization": "true", "proxy.dial_timeout": "2s", "proxy.response_header_timeout": "2m",
	"proxy.redirect_hosts": "example.com", "proxy.pass_host_header": "true", "proxy.rewrite_redirects": "false",
	"proxy.skip_auth_routes": "GET=^/public$", "proxy.allow_users": "bob", "proxy.allow_anonymous": "true",
	"proxy.groups_header": "X-Groups",
	"redis.url":           "redis://127.0.0.1:1", "redis.password": "a-redis-password", "redis.prefix": "bw2:", "redis.tls_ca": "DIR/ca.pem",
	"redis.connect_timeout": "2s", "redis.command_timeout": "2s",
	"redis.sentinel_addresses": "10.0.0.1:26379, 10.0.0.2:26379", "redis.sentinel_master": "other-master",
	"redis.sentinel_password": "a-sentinel-password", "redis.cluster_addresses": "10.0.0.1:6379",
	"redis.replicas_acked": "2", "redis.replica_timeout": "200ms",
	"ui.title": "Reloaded", "ui.product_name": "Syncthing", "ui.icon": "none",
	"access.default": "deny", "access.rule1": "* ^/secret deny",
}

// wantLive are the keys a reload applies (docs/operations.md); every
// other key needs a restart. [access] is live as a whole.
var wantLive = map[string]bool{
	"server.trusted_proxies": true, "server.access_log": true,
	"proxy.user_header": true, "proxy.email_header": true, "proxy.groups_header": true, "proxy.pass_authorization": true,
	"proxy.dial_timeout": true, "proxy.response_header_timeout": true, "proxy.pass_host_header": true,
	"proxy.rewrite_redirects": true, "proxy.skip_auth_routes": true, "proxy.allow_users": true, "proxy.allow_anonymous": true,
	"ui.title": true, "ui.product_name": true, "ui.icon": true, "backups.max_age": true, "backups.shrink_ratio": true, "backups.shrink_window": true,
	"basic.max_failures": true, "basic.failure_window": true, "basic.attempt_wait": true, "basic.max_user_failures": true,
	"basic.username": true, "basic.password": true, "basic.use_bcrypt": true,
	"flask-login.max_failures": true, "flask-login.failure_window": true, "flask-login.attempt_wait": true,
	"flask-login.max_user_failures": true, "flask-login.second_factor": true,
}

// reloadNeeds are keys that are checked only beside others: the value
// they change to needs these too, which are given in the base and the
// changed file alike.
var reloadNeeds = map[string]map[string]string{
	"passkey_login":               {"server.public_url": "https://backups.example.com"},
	"server.pprof":                {"server.metrics_listen": "127.0.0.1:0"},
	"server.tls_cert":             tlsPair,
	"server.tls_key":              tlsPair,
	"server.tls_min_version":      tlsPair,
	"server.hsts":                 tlsPair,
	"server.redirect_http_listen": tlsPair,
	"server.cookie_domain":        {"server.public_url": "https://backups.example.com"},
	"server.acme_email":           acmeOn,
	"server.acme_ca":              acmeOn,
	"server.acme_ca_root":         acmeOn,
	"authorized_orgs":             {"provider": "github"},
	"authorized_teams":            {"provider": "github"},
	"authorized_groups":           {"provider": "gitlab"},
	"base_url":                    {"provider": "gitlab"},
	"redis.tls_ca":                {"redis.url": "rediss://127.0.0.1:1"},
	"redis.sentinel_addresses":    {"redis.sentinel_master": "mymaster"},
	"redis.sentinel_master":       {"redis.sentinel_addresses": "10.0.0.1:26379", "redis.sentinel_master": "mymaster"},
	"redis.sentinel_password":     {"redis.sentinel_addresses": "10.0.0.1:26379", "redis.sentinel_master": "mymaster"},
}

// TestReloadEveryKey changes each key of the table of types (for its
// type) and of every section, one at a time, and reloads in process, as
// SIGHUP does: a live key (Type.Live, liveKeys, [access]) is applied
// without a restart line, any other is named in the one error line with
// "restart to apply". A changed file that check-config refuses fails the
// test: every value in reloadValue is a good one.
func TestReloadEveryKey(t *testing.T) {
	type trial struct{ typ, key string }
	var trials []trial
	for _, ty := range Types() {
		for _, k := range ty.Keys {
			trials = append(trials, trial{ty.Name, Section + "." + k.Name})
		}
	}
	sections := config.SectionKeys()
	sections["ui"] = []string{"title", "product_name", "icon"}
	sections["access"] = []string{"default", "rule1"}
	for _, sec := range slices.Sorted(maps.Keys(sections)) {
		for _, k := range sections[sec] {
			trials = append(trials, trial{"flask-login", sec + "." + k})
		}
	}
	for _, tr := range trials {
		t.Run(tr.typ+"/"+tr.key, func(t *testing.T) {
			sec, key, _ := strings.Cut(tr.key, ".")
			name := key
			if sec != Section {
				name = tr.key
			}
			value, ok := reloadValue[tr.typ+"."+name]
			if !ok {
				value, ok = reloadValue[name]
			}
			if !ok {
				t.Fatalf("no second value for %s in reloadValue: classify the new key", name)
			}
			dir := t.TempDir()
			keys := baseKeys(t, dir, tr.typ)
			maps.Copy(keys, reloadNeeds[name])
			if strings.HasPrefix(tr.key, "redis.") {
				keys["server.store"] = "redis"
			}
			path := writeKeys(t, dir, keys)
			buf, l := openLive(t, path)
			keys[tr.key] = value
			for k, v := range reloadNeeds[name] {
				if !strings.Contains(k, ".") {
					keys[Section+"."+k] = v
				}
			}
			writeKeys(t, dir, keys)
			if err := l.Reload(); err != nil {
				t.Fatalf("the changed file is refused: %v\n%s", err, buf)
			}
			live := wantLive[tr.key] || sec == "access" || sec == Section && wantLive[tr.typ+"."+key]
			line := restartLine(buf.String())
			switch {
			case live && line != "":
				t.Errorf("a live key is reported as needing a restart:\n%s", buf)
			case !live && !strings.Contains(line, tr.key):
				t.Errorf("no error line names %s with restart to apply:\n%s", tr.key, buf)
			}
			if !strings.Contains(buf.String(), "reload: configuration applied") {
				t.Errorf("the reload did not end:\n%s", buf)
			}
		})
	}
}

// tlsPair are the keys of HTTPS from the pair baseKeys writes.
var tlsPair = map[string]string{"server.tls_cert": "DIR/tls.crt", "server.tls_key": "DIR/tls.key"}

// acmeOn is the key the other ACME keys need.
var acmeOn = map[string]string{"server.acme_domains": "backups.example.com"}

// baseKeys is the base configuration of type typ, as "section.key".
func baseKeys(t *testing.T, dir, typ string) map[string]string {
	t.Helper()
	pair := certtest.NewCA(t).Valid(t, "backups.example.com")
	for _, name := range []string{"tls", "tls2"} { // the same pair twice
		certtest.WriteFile(t, filepath.Join(dir, name+".crt"), pair.CertPEM)
		certtest.WriteFile(t, filepath.Join(dir, name+".key"), pair.KeyPEM)
	}
	for name, content := range map[string]string{
		"users":      testkit.Users(t, testPasswords, "alice", "bob"),
		"users2":     testkit.Users(t, testPasswords, "alice"),
		"groups":     "readers: alice\n",
		"groups2":    "readers: bob\n",
		"login.html": loginPage,
		"ca.pem":     "",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, "backups"), 0o700)
	os.MkdirAll(filepath.Join(dir, "backups2"), 0o700)
	keys := map[string]string{
		"server.listen": "127.0.0.1:0", "server.state_dir": "DIR/state",
		"proxy.upstream": "http://127.0.0.1:9", "authentication.type": typ,
	}
	for k, v := range reloadBase[typ] {
		keys[Section+"."+k] = v
	}
	return keys
}

// writeKeys writes keys as DIR/backupweb.ini and returns its path.
func writeKeys(t *testing.T, dir string, keys map[string]string) string {
	t.Helper()
	by := map[string][]string{}
	for k, v := range keys {
		sec, key, _ := strings.Cut(k, ".")
		by[sec] = append(by[sec], key+" = "+strings.ReplaceAll(v, "DIR", dir))
	}
	var b strings.Builder
	for _, sec := range []string{"server", "backups", "proxy", "authentication", "redis", "ui", "access"} {
		if lines := by[sec]; len(lines) > 0 {
			slices.Sort(lines)
			b.WriteString("[" + sec + "]\n" + strings.Join(lines, "\n") + "\n")
		}
	}
	path := filepath.Join(dir, "backupweb.ini")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// openLive opens path as serve does, without listening, and returns the
// Live serving it and its log.
func openLive(t *testing.T, path string) (*logtest.Buffer, *Live) {
	t.Helper()
	buf := &logtest.Buffer{}
	log := slog.New(slog.NewTextHandler(buf, nil))
	opts := Options{Logger: log, LookupEnv: func(k string) (string, bool) {
		if k == SecretEnv {
			return strings.Repeat("ab", 32), true
		}
		return "", false
	}}
	a := Open(path, opts)
	if a.Provider == nil || a.Config.Report.HasErrors() {
		t.Fatalf("the base configuration is refused: %v", a.Config.Report.Err())
	}
	if c, ok := a.Provider.(io.Closer); ok {
		t.Cleanup(func() { c.Close() })
	}
	l := a.Live(path, opts, log, nil)
	t.Cleanup(l.Close)
	return buf, l
}

// restartLine is the last line of log that says "restart to apply".
func restartLine(log string) string {
	var line string
	for l := range strings.Lines(log) {
		if strings.Contains(l, "restart to apply") {
			line = l
		}
	}
	return line
}

// TestReloadDocsList: docs/operations.md's table of the keys that are live
// on reload names exactly the keys the code applies live, section by
// section: liveKeys for [server], [proxy], [ui] and [backups], and every
// type's Live keys for [authentication].
func TestReloadDocsList(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "| live on reload | |")
	if !ok {
		t.Fatal("docs/operations.md has no table of the keys live on reload")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	want := map[string][]string{}
	for sec, keys := range liveKeys {
		want[sec] = slices.Clone(keys)
	}
	for _, ty := range Types() {
		for k := range ty.Live() {
			if !slices.Contains(want[Section], k) {
				want[Section] = append(want[Section], k)
			}
		}
	}
	key := regexp.MustCompile("`([a-z_]+)`")
	seen := map[string]bool{}
	for line := range strings.Lines(table) {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`[") {
			continue
		}
		sec := strings.Trim(strings.TrimSpace(cells[1]), "`[]")
		if sec == "access" {
			continue // live as a whole
		}
		seen[sec] = true
		var got []string
		for _, m := range key.FindAllStringSubmatch(cells[2], -1) {
			got = append(got, m[1])
		}
		slices.Sort(got)
		w := slices.Sorted(slices.Values(want[sec]))
		if !slices.Equal(got, w) {
			t.Errorf("docs/operations.md names %v live in [%s]; the code applies %v", got, sec, w)
		}
	}
	for sec := range want {
		if !seen[sec] {
			t.Errorf("docs/operations.md's table has no row for [%s], whose keys %v are live", sec, want[sec])
		}
	}
}
