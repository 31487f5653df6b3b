package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/fspath"
	"github.com/backupweb/backupweb/internal/ini"
	"github.com/backupweb/backupweb/internal/tlscert"
)

// DefaultPath is the file Load reads when no path is given and it exists.
const DefaultPath = "backupweb.ini"

// Config is the typed configuration of the program, built once by Load.
// Paths are used as written: a relative path is relative to the working
// directory of the program, as it was for the Flask-era service.
type Config struct {
	// Source is the path of the file read, "" for the built-in defaults.
	Source string
	// Server holds the [server] section.
	Server Server
	// Backups holds the [backups] section.
	Backups Backups
	// Proxy holds the [proxy] section.
	Proxy Proxy
	// UI holds the [ui] section: the names the pages use.
	UI UI
	// Access holds the [access] section: the effective access rules.
	Access Access
	// Redis is the [redis] section, read when Server.Store is StoreRedis
	// (zero otherwise).
	Redis Redis
	// Auth is the [authentication] section, with ${NAME} already expanded.
	// It is empty (never nil) when the file has none, which means type none.
	// Load does not interpret it: the table of types (package internal/app) does.
	Auth *ini.Section
	// File is the whole parsed file (empty for the built-in defaults).
	File *ini.File
	// Report holds every problem found so far; later stages (the
	// table of types) add theirs to it. Never nil.
	Report *ini.Report
}

// Server is the [server] section.
type Server struct {
	// Listen is the TCP address to listen on, [server] listen, default
	// "127.0.0.1:8080". Port 0 picks a free port.
	Listen string
	// TrustedProxies are the reverse proxies whose forwarding headers are
	// believed, [server] trusted_proxies: comma-separated IP addresses or
	// CIDR prefixes, default none. A bare address becomes a /32 or /128
	// prefix, IPv4-mapped IPv6 forms become IPv4, and host bits are cleared.
	TrustedProxies []netip.Prefix
	// StateDir is where server-side sessions are kept, [server] state_dir,
	// default "./state".
	StateDir string
	// AccessLog turns the one-line-per-request log on, [server]
	// access_log, default true.
	AccessLog bool
	// CookieDomain is the domain of the session cookie, [server]
	// cookie_domain, default "" (the login's own host only).
	CookieDomain string
	// MetricsListen is the address of the second listener that serves
	// Prometheus metrics at /metrics, [server] metrics_listen, default ""
	// (off).
	MetricsListen string
	// Pprof serves Go's profiles (net/http/pprof) at /debug/pprof/ on the
	// metrics listener, [server] pprof, default false. It needs
	// metrics_listen: profiles are never served on the main listener.
	Pprof bool
	// PprofPublic allows Pprof with a MetricsListen that is neither
	// loopback nor private, [server] pprof_public, default false: without
	// it that is an error, since profiles show the program's command line,
	// memory and execution to whoever reaches the address.
	PprofPublic bool
	// Store is where shared state is kept, [server] store: StoreFile
	// (default: sessions in StateDir, the rest in memory) or StoreRedis
	// (everything several instances must agree on, in Config.Redis).
	Store string
	// Mode is what the instance serves, [server] mode: ModeCatalog (its
	// backup catalog), ModeProxy (the guarded interface of [proxy]
	// upstream) or ModeForwardAuth (only the answers nginx, Traefik or
	// Caddy ask for, and the sign-in pages). Default: ModeProxy when
	// upstream is set, else ModeCatalog.
	Mode string
	// PublicURL is the absolute URL users reach the service at, [server]
	// public_url, default unset (nil): scheme and host only (see
	// ParsePublicURL). Its host is the WebAuthn relying-party id and its
	// origin the only origin passkeys are accepted from; redirects that
	// must be absolute are built on it. Required when passkeys are in use.
	PublicURL *url.URL
	// TLS is HTTPS served by the program itself ([server] tls_cert and
	// the keys beside it). With it, PublicURL defaults to the https
	// origin of the certificate's first host.
	TLS TLS
}

// Backups is the [backups] section.
type Backups struct {
	// Dir is the folder whose regular files are listed and served, with
	// the folders below it, [backups] dir, default "./backups".
	Dir string
	// MaxAge is [backups] max_age: a folder whose newest backup is older
	// is stale (on its page, in JSON and in the metrics). Zero: off.
	MaxAge time.Duration
	// ShrinkRatio and ShrinkWindow are [backups] shrink_ratio (default
	// 0.5, from 0 to 1) and shrink_window (default 7): a folder whose
	// newest backup is smaller than ShrinkRatio times the median size of
	// the ShrinkWindow backups before it, or empty, is shrunk.
	ShrinkRatio  float64
	ShrinkWindow int
	// VerifyEvery is [backups] verify_every: how long after one pass over
	// the recorded checksums the service starts the next. Zero (the
	// default): no pass. VerifyRate is verify_rate, the bytes a pass
	// reads per second at most (default DefaultVerifyRate).
	VerifyEvery time.Duration
	VerifyRate  int64
}

// Built-in defaults, used for keys (or the whole file) that are absent.
const (
	DefaultListen   = "127.0.0.1:8080"
	DefaultStateDir = "./state"
	DefaultBackups  = "./backups"
	// DefaultShrinkRatio and DefaultShrinkWindow are [backups]
	// shrink_ratio's and shrink_window's defaults.
	DefaultShrinkRatio  = 0.5
	DefaultShrinkWindow = 7
	// DefaultVerifyRate is [backups] verify_rate's default: 50MB/s.
	DefaultVerifyRate = 50_000_000
	// MinVerifyEvery is the shortest [backups] verify_every.
	MinVerifyEvery = time.Minute
)

// knownSections are the sections this program reads.
var knownSections = []string{"server", "backups", "authentication", "ldap", "proxy", "redis", "ui", "access"}

// Load reads the configuration. With path == "" it reads ./backupweb.ini
// when that file exists and otherwise uses the built-in defaults; a path that
// is given must exist. It then expands ${NAME} in every value with lookup
// (nil means os.LookupEnv), fills Server and Backups, and returns the Config
// with its Report. It never returns nil and never stops early: check
// Config.Report.HasErrors or Config.Report.Err.
//
// Unknown keys in [server] and [backups], and unknown sections, are warnings
// naming them. [authentication] is only expanded, not interpreted: the
// table of types reads it, and checks (CheckSecrets) that a secret
// written in the file itself is in a private file. A [redis] password
// written in the file is checked here.
func Load(path string, lookup func(string) (string, bool)) *Config {
	rep := &ini.Report{}
	cfg := &Config{Report: rep}
	file := path
	if file == "" {
		// Lstat, not Stat: a link whose target has gone is a file that is
		// there and cannot be read (an error), never "no file" (defaults).
		if _, err := os.Lstat(DefaultPath); !errors.Is(err, fs.ErrNotExist) {
			file = DefaultPath // present, or present but unreadable: readFile says why
		}
	}
	if file == "" {
		cfg.File = ini.Parse("", strings.NewReader(""), rep, knownSections...)
	} else {
		cfg.Source = file
		cfg.File = ini.ReadFile(file, rep, knownSections...)
	}
	f := cfg.File
	checkSections(f)
	cfg.Auth = f.Section("authentication")
	f.Expand(lookup)
	cfg.CheckSecrets(f.Section("redis"), map[string]string{"password": "the Redis password", "sentinel_password": "the Redis Sentinels' password"})
	cfg.CheckSecrets(f.Section("ldap"), map[string]string{"bind_password": "the directory service account's password"})
	cfg.Server = loadServer(f.Section("server"))
	cfg.Backups = loadBackups(f.Section("backups"))
	cfg.Proxy = loadProxy(f.Section("proxy"))
	cfg.UI = loadUI(f.Section("ui"))
	cfg.Server.Store, cfg.Redis = loadStore(f.Section("server"), f.Section("redis"))
	cfg.Server.Mode = loadMode(f.Section("server"), f.Section("backups"), f.Section("proxy"), cfg.Proxy)
	cfg.Access = loadAccess(f.Section("access"), f.Section("proxy"), cfg.Proxy, cfg.Server)
	return cfg
}

// checkSections records a problem for every section the program does not
// read. A near miss of a known name ([Authentication], [authentification],
// [auth]) is an error: the operator meant that section, and reading the
// file without it could turn authentication off. Other unknown sections
// are warnings.
func checkSections(f *ini.File) {
	for _, name := range f.Sections() {
		if slices.Contains(knownSections, name) {
			continue
		}
		line := f.Section(name).HeaderLine()
		if want, ok := ini.Suggest(name, knownSections); ok {
			if strings.EqualFold(strings.TrimFunc(name, ini.IsSpace), want) {
				f.Report().Errorf(f.Name, line, name, "", "section names are case-sensitive and written without spaces: write [%s]", want)
			} else {
				f.Report().Errorf(f.Name, line, name, "", "unknown section; did you mean [%s]?", want)
			}
			continue
		}
		f.Report().Warnf(f.Name, line, name, "", "unknown section, ignored; known sections are [%s]", strings.Join(knownSections, "], ["))
	}
}

// CheckSecrets warns when one of the keys of s that hold secrets (key:
// what it holds, such as "an OAuth client secret") is written in the file
// itself rather than taken from ${NAME}, and the file can be read by others
// (see CheckPrivate). The table of types says which keys of
// each type are secrets.
func (c *Config) CheckSecrets(s *ini.Section, secrets map[string]string) {
	if c.Source == "" {
		return
	}
	for _, key := range slices.Sorted(maps.Keys(secrets)) {
		if s.Literal(key) {
			ini.CheckPrivate(c.Report, c.Source, secrets[key])
			return // one warning is enough: the remedy is the same
		}
	}
}

// checkPublicMetrics judges a metrics_listen (valid) that others may
// reach, one neither loopback nor private (all interfaces, a public
// address, or a host name, which is not resolved here): with pprof it is
// an error unless pprof_public says it is meant, since profiles show the
// program's command line, memory and execution; without it, a warning
// naming the address.
func checkPublicMetrics(s *ini.Section, srv Server) {
	host, _, _ := net.SplitHostPort(srv.MetricsListen)
	if host != "" && localHost(host) {
		return
	}
	switch {
	case srv.Pprof && !srv.PprofPublic:
		s.Errorf("pprof", "would serve the program's profiles (its command line, memory, goroutines and execution traces) to anyone who reaches metrics_listen = %s, which is not a loopback or private address; put metrics_listen on loopback or a private network, or set pprof_public = true if that is meant", srv.MetricsListen)
	case srv.Pprof:
		s.Warnf("metrics_listen", "%s is not a loopback or private address, and pprof_public = true serves the program's profiles there to anyone who reaches it", srv.MetricsListen)
	default:
		s.Warnf("metrics_listen", "%s is not a loopback or private address: anyone who reaches it reads the metrics (request, sign-in and refusal counts); prefer loopback or a private network", srv.MetricsListen)
	}
}

// serverKeys and backupsKeys are the keys Load understands.
var (
	serverKeys  = []string{"listen", "trusted_proxies", "state_dir", "access_log", "metrics_listen", "pprof", "pprof_public", "cookie_domain", "store", "mode", "public_url", "tls_cert", "tls_key", "tls_min_version", "hsts", "redirect_http_listen", "acme_domains", "acme_email", "acme_ca", "acme_ca_root"}
	backupsKeys = []string{"dir", "max_age", "shrink_ratio", "shrink_window", "verify_every", "verify_rate"}
)

// SectionKeys returns, for each section Load reads besides
// [authentication], the keys it understands.
func SectionKeys() map[string][]string {
	return map[string][]string{"server": slices.Clone(serverKeys), "backups": slices.Clone(backupsKeys), "proxy": slices.Clone(proxyKeys), "redis": slices.Clone(redisKeys)}
}

// loadServer reads [server].
func loadServer(s *ini.Section) Server {
	warnUnknown(s, serverKeys)
	srv := Server{
		Listen:        s.String("listen", DefaultListen),
		StateDir:      s.String("state_dir", DefaultStateDir),
		AccessLog:     s.Bool("access_log", true),
		MetricsListen: s.String("metrics_listen", ""),
		Pprof:         s.Bool("pprof", false),
		PprofPublic:   s.Bool("pprof_public", false),
	}
	if srv.Pprof && srv.MetricsListen == "" {
		s.Errorf("pprof", "needs metrics_listen: profiles are served only on the metrics listener")
	}
	if srv.MetricsListen != "" {
		if err := CheckListen(srv.MetricsListen); err != nil {
			s.Errorf("metrics_listen", "%v", err)
		} else if srv.MetricsListen == srv.Listen && !strings.HasSuffix(srv.Listen, ":0") {
			s.Errorf("metrics_listen", "must differ from listen: metrics are served on a second listener")
		} else {
			checkPublicMetrics(s, srv)
		}
	}
	if err := CheckListen(srv.Listen); err != nil {
		s.Errorf("listen", "%v", err)
	}
	if srv.StateDir == "" {
		s.Errorf("state_dir", "must not be empty; the default is %s", DefaultStateDir)
	}
	srv.TrustedProxies = parseProxies(s)
	srv.CookieDomain = checkCookieDomain(s)
	srv.PublicURL = loadPublicURL(s)
	srv.TLS = loadTLS(s, srv.Listen, time.Now())
	if srv.PublicURL == nil && !s.Has("public_url") {
		srv.PublicURL = httpsOrigin(srv.TLS, srv.Listen)
	} else if leaf := srv.TLS.Leaf; srv.PublicURL != nil && leaf != nil && !tlscert.Covers(leaf, srv.PublicURL.Hostname()) {
		s.Warnf("public_url", "the host %s is not among those the certificate %s covers (%s); browsers will refuse the connection", srv.PublicURL.Hostname(), fspath.Show(srv.TLS.CertFile), strings.Join(tlscert.Hosts(leaf), ", "))
	} else if d := srv.TLS.ACME.Domains; srv.PublicURL != nil && len(d) > 0 && !slices.Contains(d, strings.ToLower(srv.PublicURL.Hostname())) {
		s.Warnf("public_url", "the host %s is not among acme_domains (%s); no certificate is obtained for it and browsers will refuse the connection", srv.PublicURL.Hostname(), strings.Join(d, ", "))
	}
	return srv
}

// CheckListen checks an address to listen on, as [server] listen and the
// -listen flag give it: HOST:PORT with a port from 0 to 65535 (0 picks a
// free port) or a service name. The host may be empty (every interface).
func CheckListen(addr string) error {
	if addr == "" {
		return fmt.Errorf("must not be empty; the default is %s", DefaultListen)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return errors.New("must be HOST:PORT, for example 127.0.0.1:8080 or [::1]:8080 (use port 0 for any free port)")
	}
	if n, err := strconv.Atoi(port); err == nil {
		if n < 0 || n > 65535 {
			return fmt.Errorf("port %d is out of range; a port is a number from 0 to 65535 (0 picks a free one)", n)
		}
	} else if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("port %q is neither a number from 0 to 65535 nor a known service name", port)
	}
	if strings.ContainsAny(host, " /") {
		return errors.New("the host must be an IP address or a host name, for example 127.0.0.1:8080")
	}
	return nil
}

// parseProxies reads [server] trusted_proxies. Proxy addresses are not
// secrets, so problems quote the offending item.
func parseProxies(s *ini.Section) []netip.Prefix {
	var out []netip.Prefix
	for _, item := range s.List("trusted_proxies") {
		p, err := parseProxy(item)
		if err != nil {
			s.Errorf("trusted_proxies", "%q is not an IP address or CIDR prefix (%v)", item, err)
			continue
		}
		if p != p.Masked() {
			s.Warnf("trusted_proxies", "%q has bits set after the prefix length; it is read as %s", item, p.Masked())
		}
		out = append(out, p.Masked())
	}
	return out
}

// parseProxy reads one IP address (a host prefix) or CIDR prefix, turning
// IPv4-mapped IPv6 forms into IPv4.
func parseProxy(item string) (netip.Prefix, error) {
	if strings.Contains(item, "/") {
		p, err := netip.ParsePrefix(item)
		if err != nil {
			return netip.Prefix{}, errors.New("want ADDRESS/BITS, such as 10.0.0.0/8 or fd00::/8")
		}
		if a := p.Addr(); a.Is4In6() {
			if p.Bits() < 96 {
				return netip.Prefix{}, errors.New("an IPv4-mapped prefix must be at least /96")
			}
			return netip.PrefixFrom(a.Unmap(), p.Bits()-96), nil
		}
		return p, nil
	}
	a, err := netip.ParseAddr(item)
	if err != nil {
		return netip.Prefix{}, errors.New("want an address such as 10.0.0.1 or ::1, or a prefix such as 10.0.0.0/8")
	}
	if a.Zone() != "" {
		return netip.Prefix{}, errors.New("an address with a zone cannot be matched")
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// loadBackups reads [backups].
func loadBackups(s *ini.Section) Backups {
	warnUnknown(s, backupsKeys)
	b := Backups{Dir: s.String("dir", DefaultBackups), MaxAge: s.Duration("max_age", 0),
		ShrinkRatio: DefaultShrinkRatio, ShrinkWindow: s.Int("shrink_window", DefaultShrinkWindow, 1, 1000),
		VerifyEvery: s.Duration("verify_every", 0), VerifyRate: DefaultVerifyRate}
	if b.Dir == "" {
		s.Errorf("dir", "must not be empty; the default is %s", DefaultBackups)
	}
	if v, ok := s.Lookup("shrink_ratio"); ok {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || !(r >= 0 && r <= 1) {
			s.Errorf("shrink_ratio", "must be a number from 0 to 1 such as 0.5 (0: only an empty backup counts as shrunk)")
		} else {
			b.ShrinkRatio = r
		}
	}
	if b.VerifyEvery > 0 && b.VerifyEvery < MinVerifyEvery {
		s.Errorf("verify_every", "must be at least %s", MinVerifyEvery)
		b.VerifyEvery = 0
	}
	if v, ok := s.Lookup("verify_rate"); ok {
		r, err := ParseRate(v)
		if err != nil {
			s.Errorf("verify_rate", "%v", err)
		} else {
			b.VerifyRate = r
		}
	}
	return b
}

// warnUnknown records a warning for each key of s that is not in known.
func warnUnknown(s *ini.Section, known []string) {
	for _, k := range s.Keys() {
		if !slices.Contains(known, k) {
			s.Warnf(k, "unknown key, ignored; known keys are %s", strings.Join(known, ", "))
		}
	}
}

// CheckBackupsDir looks at the backups folder as serve will use it: a path
// that exists but is not a folder, or cannot be looked at, is an error; a
// folder that does not exist yet is a warning (the catalog is empty until
// it is made). It is separate from Load so that Load itself touches no
// folder but the configuration file's.
func (c *Config) CheckBackupsDir() {
	s := c.File.Section("backups")
	dir := c.Backups.Dir
	if dir == "" || c.Report.HasErrorsAt("backups", "dir") {
		return
	}
	switch info, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		s.Warnf("dir", "the backups folder %s does not exist yet; the catalog is empty until it is made", fspath.Show(dir))
	case err != nil:
		s.Errorf("dir", "cannot use the backups folder %s: %v", fspath.Show(dir), fspath.Cause(err))
	case !info.IsDir():
		s.Errorf("dir", "%s is not a folder; set dir to the folder that holds the backups", fspath.Show(dir))
	}
}
