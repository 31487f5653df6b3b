package config

import (
	"crypto/tls"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/ini"
)

// env is the environment of these tests.
var env = map[string]string{"SECRET": "s3cr3t-value"}

func lookupEnv(name string) (string, bool) {
	v, ok := env[name]
	return v, ok
}

// writeConfig writes content to a 0600 file in a fresh directory.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "backupweb.ini")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadDefaultsWithoutFile(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := Load("", lookupEnv)
	if cfg.Source != "" || cfg.Report == nil || len(cfg.Report.Problems()) != 0 {
		t.Fatalf("Source %q, problems %v", cfg.Source, cfg.Report.Problems())
	}
	want := Server{Listen: "127.0.0.1:8080", StateDir: "./state", AccessLog: true, Store: StoreFile, Mode: ModeCatalog, TLS: TLS{MinVersion: tls.VersionTLS12, HSTS: true}}
	if !reflect.DeepEqual(cfg.Server, want) || cfg.Backups.Dir != "./backups" {
		t.Errorf("Server %+v, Backups %+v", cfg.Server, cfg.Backups)
	}
	if cfg.Auth == nil || cfg.File == nil || cfg.File.Has("authentication") || len(cfg.Auth.Keys()) != 0 {
		t.Error("without a file, [authentication] must be an empty section")
	}
}

func TestLoadReadsDefaultPath(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile(DefaultPath, []byte("[server]\nlisten = 127.0.0.1:0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := Load("", lookupEnv)
	if cfg.Source != DefaultPath || cfg.Server.Listen != "127.0.0.1:0" || cfg.Report.HasErrors() {
		t.Errorf("Source %q, Listen %q, problems %v", cfg.Source, cfg.Server.Listen, cfg.Report.Problems())
	}
}

func TestLoadMissingExplicitPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.ini")
	cfg := Load(path, lookupEnv)
	if !cfg.Report.HasErrors() || cfg.Source != path || cfg.File == nil || cfg.Auth == nil {
		t.Fatalf("want an error for a missing file, got %v", cfg.Report.Problems())
	}
	p := cfg.Report.Problems()[0]
	if p.File != path || !strings.Contains(p.Msg, "cannot read") || !strings.Contains(p.Msg, "no such file") {
		t.Errorf("problem %q", p)
	}
	if cfg.Server.Listen != DefaultListen {
		t.Error("defaults must still be filled")
	}
	if cfg = Load(t.TempDir(), lookupEnv); !cfg.Report.HasErrors() {
		t.Error("a directory must be refused")
	}
}

func TestLoadFull(t *testing.T) {
	path := writeConfig(t, `; backupweb
[server]
Listen = 0.0.0.0:9000
trusted_proxies = 10.0.0.1, 192.168.0.0/16,
  ::1, fd00::/8, ::ffff:172.16.0.1
state_dir = /var/lib/backupweb
access_log = no
metrics_listen = 127.0.0.1:9090
[backups]
dir = ${BACKUP_DIR}
[authentication]
type = oauth
client_secret = ${SECRET}
`)
	cfg := Load(path, func(n string) (string, bool) {
		if n == "BACKUP_DIR" {
			return "/srv/backups", true
		}
		return lookupEnv(n)
	})
	if problems := cfg.Report.Problems(); len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	want := Server{
		Listen:        "0.0.0.0:9000",
		StateDir:      "/var/lib/backupweb",
		MetricsListen: "127.0.0.1:9090",
		Store:         "file",
		Mode:          ModeCatalog,
		TLS:           TLS{MinVersion: tls.VersionTLS12, HSTS: true},
		TrustedProxies: []netip.Prefix{
			netip.MustParsePrefix("10.0.0.1/32"), netip.MustParsePrefix("192.168.0.0/16"),
			netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("fd00::/8"),
			netip.MustParsePrefix("172.16.0.1/32"),
		},
	}
	if !reflect.DeepEqual(cfg.Server, want) {
		t.Errorf("Server = %+v\nwant     %+v", cfg.Server, want)
	}
	if cfg.Backups.Dir != "/srv/backups" {
		t.Errorf("Backups.Dir = %q", cfg.Backups.Dir)
	}
	if v, _ := cfg.Auth.Lookup("client_secret"); v != env["SECRET"] || cfg.Auth.Name() != "authentication" {
		t.Errorf("[authentication] not expanded: %q", v)
	}
	if got := cfg.Auth.Unused(); !reflect.DeepEqual(got, []string{"type"}) {
		t.Errorf("Load must leave [authentication] keys for the table of types, Unused() = %q", got)
	}
}

func TestLoadProblems(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string // Problem.String suffixes after "FILE:", in order
	}{
		{"unknown key and section", "[server]\nlisten = 127.0.0.1:1\nport = 1\n[backups]\nfolder = x\n[extra]\n",
			[]string{"warning: :6: [extra] unknown section, ignored; known sections are [server], [backups], [authentication]",
				"warning: :3: [server] port: unknown key, ignored; known keys are listen, trusted_proxies, state_dir",
				"warning: :5: [backups] folder: unknown key, ignored; known keys are dir"}},
		{"case of section names", "[Server]\n", []string{"error: :1: [Server] section names are case-sensitive and written without spaces: write [server]"}},
		{"case of authentication", "[Authentication]\ntype = basic\n", []string{"error: :1: [Authentication] section names are case-sensitive and written without spaces: write [authentication]"}},
		{"misspelt authentication", "[authentification]\n", []string{"error: :1: [authentification] unknown section; did you mean [authentication]?"}},
		{"missing letter", "[authenticaton]\n", []string{"error: :1: [authenticaton] unknown section; did you mean [authentication]?"}},
		{"short for authentication", "[auth]\n", []string{"error: :1: [auth] unknown section; did you mean [authentication]?"}},
		{"unrelated section", "[logging]\n", []string{"warning: :1: [logging] unknown section, ignored"}},
		{"indented header", "[backups]\ndir = /srv\n  [authentication]\n", []string{"error: :3: [backups] dir: the [authentication] header is indented, so it is read as part of the value of dir (line 2)"}},
		{"port out of range", "[server]\nlisten = 127.0.0.1:99999\n", []string{"error: :2: [server] listen: port 99999 is out of range"}},
		{"port not a number", "[server]\nlisten = 127.0.0.1:http-nope\n", []string{"error: :2: [server] listen: port \"http-nope\" is neither"}},
		{"duplicate key", "[server]\nlisten = 127.0.0.1:1\nlisten = 127.0.0.1:2\n", []string{"error: :3: [server] listen: duplicate key (first set on line 2); set it once"}},
		{"bad proxies", "[server]\ntrusted_proxies = 10.0.0.1, nope, 10.0.0.0/33, fe80::1%eth0, ::ffff:0.0.0.0/64\n",
			[]string{`error: :2: [server] trusted_proxies: "nope" is not an IP address or CIDR prefix`,
				`error: :2: [server] trusted_proxies: "10.0.0.0/33" is not`,
				`error: :2: [server] trusted_proxies: "fe80::1%eth0" is not`,
				`error: :2: [server] trusted_proxies: "::ffff:0.0.0.0/64" is not`}},
		{"host bits", "[server]\ntrusted_proxies = 10.1.2.3/8\n", []string{`warning: :2: [server] trusted_proxies: "10.1.2.3/8" has bits set after the prefix length; it is read as 10.0.0.0/8`}},
		{"bad listen", "[server]\nlisten = 8080\n", []string{"error: :2: [server] listen: must be HOST:PORT"}},
		{"upstream not a URL", "[proxy]\nupstream = 127.0.0.1:5000\n", []string{"error: :2: [proxy] upstream: must be an absolute http or https URL"}},
		{"upstream of another scheme", "[proxy]\nupstream = ftp://files.example.com/\n", []string{"error: :2: [proxy] upstream: must be an absolute http or https URL"}},
		{"upstream over plain http far away", "[proxy]\nupstream = http://kopia.example.com:51515\n", []string{"warning: :2: [proxy] upstream: uses plain http to kopia.example.com"}},
		{"upstream over plain http on loopback", "[proxy]\nupstream = http://127.0.0.1:5000\n", nil},
		{"unknown store", "[server]\nstore = memcached\n", []string{`error: :2: [server] store: must be "file"`}},
		{"redis section without the redis store", "[redis]\nurl = redis://10.0.0.5:6379/0\n", []string{`warning: :1: [redis] is ignored: [server] store is "file"`}},
		{"redis defaults", "[server]\nstore = redis\n", nil},
		{"redis store in capitals", "[server]\nstore = Redis\n", nil},
		{"redis over TLS with an ACL user", "[server]\nstore = redis\n[redis]\nurl = rediss://backupweb@redis.example.com:6380/2\npassword = x\n", nil},
		{"redis unix socket", "[server]\nstore = redis\n[redis]\nurl = unix:///run/redis/redis.sock\n", nil},
		{"redis password in the url", "[server]\nstore = redis\n[redis]\nurl = redis://:hunter2@127.0.0.1:6379/0\n", []string{"error: :4: [redis] url: must not hold a password"}},
		{"redis other scheme", "[server]\nstore = redis\n[redis]\nurl = http://127.0.0.1:6379\n", []string{"error: :4: [redis] url: must start with redis://"}},
		{"redis bad port", "[server]\nstore = redis\n[redis]\nurl = redis://127.0.0.1:637900\n", []string{"error: :4: [redis] url: has a port that is not"}},
		{"redis bad database", "[server]\nstore = redis\n[redis]\nurl = redis://127.0.0.1:6379/zero\n", []string{"error: :4: [redis] url: the path must be a database number"}},
		{"redis relative socket", "[server]\nstore = redis\n[redis]\nurl = unix://redis.sock\n", []string{"error: :4: [redis] url: a unix socket is written"}},
		{"redis empty prefix", "[server]\nstore = redis\n[redis]\nprefix =\n", []string{"error: :4: [redis] prefix: must not be empty"}},
		{"redis zero timeout", "[server]\nstore = redis\n[redis]\ncommand_timeout = 0s\n", []string{"error: :4: [redis] command_timeout: must be a duration greater than zero"}},
		{"redis missing CA", "[server]\nstore = redis\n[redis]\nurl = rediss://127.0.0.1:6380\ntls_ca = /nonexistent/ca.pem\n", []string{"error: :5: [redis] tls_ca: cannot read /nonexistent/ca.pem"}},
		{"redis unknown key", "[server]\nstore = redis\n[redis]\nhost = 127.0.0.1\n", []string{"warning: :4: [redis] host: unknown key, ignored"}},
		{"redis sentinel", "[server]\nstore = redis\n[redis]\nsentinel_addresses = 10.0.0.1:26379, 10.0.0.2:26379, 10.0.0.3:26379\nsentinel_master = mymaster\nsentinel_password = x\n", nil},
		{"redis sentinel without master", "[server]\nstore = redis\n[redis]\nsentinel_addresses = 10.0.0.1:26379\n", []string{"error: :4: [redis] sentinel_addresses: needs sentinel_master"}},
		{"redis sentinel bad address", "[server]\nstore = redis\n[redis]\nsentinel_addresses = 10.0.0.1\nsentinel_master = m\n", []string{`error: :4: [redis] sentinel_addresses: "10.0.0.1": is not host:port`}},
		{"redis sentinel master alone", "[server]\nstore = redis\n[redis]\nsentinel_master = m\n", []string{"warning: :4: [redis] sentinel_master: is ignored without sentinel_addresses"}},
		{"redis sentinel over a socket", "[server]\nstore = redis\n[redis]\nurl = unix:///run/redis.sock\nsentinel_addresses = 10.0.0.1:26379\nsentinel_master = m\n", []string{"error: :4: [redis] url: must be redis:// or rediss:// with sentinel_addresses"}},
		{"redis cluster", "[server]\nstore = redis\n[redis]\nurl = rediss://backupweb@redis/0\ncluster_addresses = 10.0.0.1:6379, 10.0.0.2:6379\nreplicas_acked = 2\nreplica_timeout = 250ms\n", nil},
		{"redis cluster database", "[server]\nstore = redis\n[redis]\nurl = redis://redis/3\ncluster_addresses = 10.0.0.1:6379\n", []string{"error: :4: [redis] url: a Redis Cluster has database 0 only"}},
		{"redis cluster and sentinel", "[server]\nstore = redis\n[redis]\ncluster_addresses = 10.0.0.1:6379\nsentinel_addresses = 10.0.0.1:26379\nsentinel_master = m\n", []string{"error: :4: [redis] cluster_addresses: cannot go with sentinel_addresses"}},
		{"redis cluster braces in prefix", "[server]\nstore = redis\n[redis]\ncluster_addresses = 10.0.0.1:6379\nprefix = bw{1}:\n", []string{"error: :5: [redis] prefix: must not hold { or }"}},
		{"redis cluster bad port", "[server]\nstore = redis\n[redis]\ncluster_addresses = 10.0.0.1:0\n", []string{`error: :4: [redis] cluster_addresses: "10.0.0.1:0": has a port that is not`}},
		{"redis replicas acked out of range", "[server]\nstore = redis\n[redis]\nreplicas_acked = -1\n", []string{"error: :4: [redis] replicas_acked: must be a whole number from 0 to 16"}},
		{"redis replica timeout too long", "[server]\nstore = redis\n[redis]\nreplicas_acked = 1\nreplica_timeout = 2s\n", []string{"error: :5: [redis] replica_timeout: must be shorter than command_timeout"}},
		{"upstream over plain http on a private address", "[proxy]\nupstream = http://192.168.1.20:8200\n", nil},
		{"bad header name", "[proxy]\nupstream = http://127.0.0.1:5000\nuser_header = X User\n", []string{"error: :3: [proxy] user_header: is not a header name"}},
		{"forward-auth with an upstream", "[server]\nmode = forward-auth\n[proxy]\nupstream = http://127.0.0.1:5000\n", []string{"error: :2: [server] mode: is \"forward-auth\" but [proxy] upstream is set"}},
		{"proxy mode without upstream", "[server]\nmode = proxy\n", []string{"error: :2: [server] mode: is \"proxy\" but [proxy] upstream is not set"}},
		{"unknown mode", "[server]\nmode = gateway\n", []string{"error: :2: [server] mode: must be \"catalog\""}},
		{"forward-auth with backups", "[server]\nmode = forward-auth\n[backups]\ndir = /srv/backups\n", []string{"warning: :4: [backups] dir: is not used: in forward-auth mode"}},
		{"proxy with backups", "[proxy]\nupstream = http://127.0.0.1:5000\n[backups]\ndir = /srv/backups\n", []string{"warning: :4: [backups] dir: is not used: in proxy mode"}},
		{"proxy keys without upstream", "[server]\nmode = forward-auth\n[proxy]\npass_host_header = true\nskip_auth_routes = ^/health$\nallow_users = alice\n",
			[]string{"warning: :4: [proxy] pass_host_header: is not used", "warning: :5: [proxy] skip_auth_routes: is not used"}},
		{"skip routes", "[proxy]\nupstream = http://127.0.0.1:5000\nskip_auth_routes = GET|HEAD=^/rest/noauth/health$,\n  ^/public/\n", nil},
		{"skip route catch-all", "[proxy]\nupstream = http://127.0.0.1:5000\n\nskip_auth_routes = ^/health$, ^/\n", []string{"error: :4: [proxy] skip_auth_routes: \"^/\": the path pattern matches every path"}},
		{"skip route catch-all dot-star", "[proxy]\nupstream = http://127.0.0.1:5000\nskip_auth_routes = GET=^.*\n", []string{"error: :3: [proxy] skip_auth_routes: \"GET=^.*\": the path pattern matches every path"}},
		{"skip route unanchored", "[proxy]\nupstream = http://127.0.0.1:5000\nskip_auth_routes = .*\n", []string{"error: :3: [proxy] skip_auth_routes: \".*\": the path pattern does not start with ^"}},
		{"skip route catch-all allowed", "[proxy]\nupstream = http://127.0.0.1:5000\nskip_auth_routes = ^/\nallow_anonymous = true\n", nil},
		{"skip route bad pattern", "[proxy]\nupstream = http://127.0.0.1:5000\nskip_auth_routes = ^/api/(\n", []string{"error: :3: [proxy] skip_auth_routes: \"^/api/(\": the path pattern is not a regular expression"}},
		{"skip route bad method", "[proxy]\nupstream = http://127.0.0.1:5000\nskip_auth_routes = GE T=^/x\n", []string{"error: :3: [proxy] skip_auth_routes: \"GE T=^/x\": \"GE T\" is not a method name"}},
		{"pass host header not a boolean", "[proxy]\nupstream = http://127.0.0.1:5000\npass_host_header = maybe\nrewrite_redirects = nope\n",
			[]string{"error: :3: [proxy] pass_host_header: not a boolean", "error: :4: [proxy] rewrite_redirects: not a boolean"}},
		{"cookie domain that is an address", "[server]\ncookie_domain = 10.0.0.1\n", []string{"error: :2: [server] cookie_domain: must be a domain"}},
		{"bad metrics listener", "[server]\nmetrics_listen = 9090\n", []string{"error: :2: [server] metrics_listen: must be HOST:PORT"}},
		{"pprof on every interface", "[server]\nmetrics_listen = 0.0.0.0:9464\npprof = true\n", []string{"error: :3: [server] pprof: would serve the program's profiles (its command line, memory, goroutines and execution traces) to anyone who reaches metrics_listen = 0.0.0.0:9464"}},
		{"pprof on all interfaces, no host", "[server]\nmetrics_listen = :9464\npprof = true\n", []string{"error: :3: [server] pprof: would serve the program's profiles"}},
		{"pprof on a public address", "[server]\nmetrics_listen = [2001:db8::1]:9464\npprof = true\n", []string{"error: :3: [server] pprof: would serve"}},
		{"pprof on a host name", "[server]\nmetrics_listen = metrics.example.com:9464\npprof = true\n", []string{"error: :3: [server] pprof: would serve"}},
		{"pprof made public on purpose", "[server]\nmetrics_listen = 0.0.0.0:9464\npprof = true\npprof_public = true\n", []string{"warning: :2: [server] metrics_listen: 0.0.0.0:9464 is not a loopback or private address, and pprof_public = true"}},
		{"pprof on loopback", "[server]\nmetrics_listen = 127.0.0.1:9464\npprof = true\n", nil},
		{"pprof on localhost", "[server]\nmetrics_listen = localhost:9464\npprof = true\n", nil},
		{"pprof on a private address", "[server]\nmetrics_listen = 10.1.2.3:9464\npprof = true\n", nil},
		{"pprof on a private IPv6 address", "[server]\nmetrics_listen = [fd00::5]:9464\npprof = true\n", nil},
		{"public metrics without pprof", "[server]\nmetrics_listen = 0.0.0.0:9464\n", []string{"warning: :2: [server] metrics_listen: 0.0.0.0:9464 is not a loopback or private address: anyone who reaches it reads the metrics"}},
		{"metrics on the main listener", "[server]\nlisten = 127.0.0.1:8080\nmetrics_listen = 127.0.0.1:8080\n", []string{"error: :3: [server] metrics_listen: must differ from listen"}},
		{"empty values", "[server]\nlisten =\nstate_dir =\n[backups]\ndir =\n",
			[]string{"error: :2: [server] listen: must not be empty", "error: :3: [server] state_dir: must not be empty", "error: :5: [backups] dir: must not be empty"}},
		{"unset variable", "[backups]\ndir = ${NOPE}\n", []string{"error: :2: [backups] dir: environment variable NOPE is not set"}},
		{"syntax", "listen = x\n[server]\n", []string{"error: :1: missing section header"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.content)
			problems := Load(path, lookupEnv).Report.Problems()
			if len(problems) != len(tt.want) {
				t.Fatalf("problems %v, want %d", problems, len(tt.want))
			}
			for i, p := range problems {
				got := strings.Replace(p.String(), path, "", 1)
				if !strings.HasPrefix(got, tt.want[i]) {
					t.Errorf("problem %d:\n got %q\nwant %q...", i, got, tt.want[i])
				}
			}
		})
	}
}

func TestCheckSecrets(t *testing.T) {
	secrets := map[string]string{"password": "a password or password hash", "client_secret": "an OAuth client secret"}
	tests := []struct {
		name, ini string
		warn      string // "" when no permission warning is expected
	}{
		{"literal password", "[authentication]\ntype = basic\npassword = plain-pass\n", "holds a password or password hash but its mode 0644"},
		{"literal hash", "[authentication]\ntype = basic\nuse_bcrypt = True\npassword = $2b$12$abc\n", "holds a password or password hash but"},
		{"literal client secret", "[authentication]\ntype = oauth\nclient_secret = cs-123\n", "holds an OAuth client secret but"},
		{"secrets from environment", "[authentication]\ntype = oauth\nclient_secret = ${SECRET}\npassword = ${SECRET}\n", ""},
		{"no secrets", "[authentication]\ntype = none\n", ""},
		{"literal redis password", "[server]\nstore = redis\n[redis]\npassword = redis-pass\n", "holds the Redis password but"},
		{"redis password from environment", "[server]\nstore = redis\n[redis]\npassword = ${SECRET}\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.ini)
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := Load(path, lookupEnv)
			cfg.CheckSecrets(cfg.Auth, secrets)
			var warnings []string
			for _, p := range cfg.Report.Problems() {
				if strings.Contains(p.String(), "plain-pass") || strings.Contains(p.String(), "cs-123") || strings.Contains(p.String(), "$2b$") || strings.Contains(p.String(), "redis-pass") {
					t.Errorf("problem shows a secret: %s", p)
				}
				warnings = append(warnings, p.String())
			}
			switch {
			case tt.warn == "" && len(warnings) != 0:
				t.Errorf("unexpected problems %q", warnings)
			case tt.warn != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tt.warn) || !strings.Contains(warnings[0], "chmod 600 "+path)):
				t.Errorf("problems %q, want one containing %q", warnings, tt.warn)
			}
			if cfg.Auth.Present() && cfg.Auth.Unused() == nil {
				t.Error("the permission check must not mark [authentication] keys as used")
			}
		})
	}
}

func TestLoadRefusesUnusableFiles(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Symlink(filepath.Join(dir, "moved.ini"), DefaultPath); err != nil {
		t.Fatal(err)
	}
	rep := Load("", lookupEnv).Report
	if !rep.HasErrors() || !strings.Contains(rep.Err().Error(), "symbolic link to") {
		t.Fatalf("a dangling ./%s must be an error naming the link, got %v", DefaultPath, rep.Problems())
	}
	os.Remove(DefaultPath)
	os.Mkdir(DefaultPath, 0o755)
	rep = Load("", lookupEnv).Report
	if !rep.HasErrors() || !strings.Contains(rep.Err().Error(), "it is a directory") {
		t.Fatalf("a directory ./%s must be an error, got %v", DefaultPath, rep.Problems())
	}
	os.Remove(DefaultPath)
	if cfg := Load("", lookupEnv); cfg.Report.HasErrors() || cfg.Source != "" {
		t.Fatalf("no file at all means the built-in defaults, got %v", cfg.Report.Problems())
	}
}

func TestCheckBackupsDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	os.WriteFile(file, nil, 0o600)
	tests := []struct {
		dir, want string
	}{
		{dir, ""},
		{filepath.Join(dir, "missing"), "warning: " + "%s: [backups] dir: the backups folder " + filepath.Join(dir, "missing") + " does not exist yet"},
		{file, "error: " + "%s: [backups] dir: " + file + " is not a folder"},
	}
	for _, tt := range tests {
		path := writeConfig(t, "[backups]\ndir = "+tt.dir+"\n")
		cfg := Load(path, lookupEnv)
		cfg.CheckBackupsDir()
		problems := cfg.Report.Problems()
		if tt.want == "" {
			if len(problems) != 0 {
				t.Errorf("dir %s: unexpected %v", tt.dir, problems)
			}
			continue
		}
		want := strings.Replace(tt.want, "%s", path+":2", 1)
		if len(problems) != 1 || !strings.HasPrefix(problems[0].String(), want) {
			t.Errorf("dir %s: got %v, want %q", tt.dir, problems, want)
		}
	}
}

// TestRedisReplicasAckedDefault: a write waits for one replica with
// Sentinel or Cluster and for none with one server, unless set.
func TestRedisReplicasAckedDefault(t *testing.T) {
	for _, tc := range []struct {
		name, redis string
		want        int
	}{
		{"one server", "", 0},
		{"sentinel", "sentinel_addresses = 10.0.0.1:26379\nsentinel_master = m\n", 1},
		{"cluster", "cluster_addresses = 10.0.0.1:6379\n", 1},
		{"cluster, set", "cluster_addresses = 10.0.0.1:6379\nreplicas_acked = 0\n", 0},
		{"one server, set", "replicas_acked = 2\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &ini.Report{}
			f := ini.Parse("t.ini", strings.NewReader("[server]\nstore = redis\n[redis]\n"+tc.redis), rep)
			_, r := loadStore(f.Section("server"), f.Section("redis"))
			if r.ReplicasAcked != tc.want || r.ReplicaTimeout != DefaultReplicaTimeout {
				t.Fatalf("replicas_acked %d, replica_timeout %s; want %d, %s (%v)", r.ReplicasAcked, r.ReplicaTimeout, tc.want, DefaultReplicaTimeout, rep)
			}
		})
	}
}
