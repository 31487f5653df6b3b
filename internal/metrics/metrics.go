// Package metrics exports what backupweb does as Prometheus metrics, on a
// registry of its own served by Handler on a separate listener
// ([server] metrics_listen).
//
// The rest of the program does not import client_golang: it reports
// through small hook interfaces (web.Observer, auth.Events,
// password.Observer, session.Observer) that *Metrics implements: the web
// layer gets it as its Observer, the providers as one auth.Hooks value in
// their Deps (Hooks). Every label has a bounded set of values: types, reasons and
// providers come from fixed lists (a reason outside its list is counted as
// "other"; details go to the log), routes are ServeMux patterns (never raw
// paths) and status codes are classes ("2xx").
package metrics

import (
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/backupweb/backupweb/internal/access"
	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/buildinfo"
	"github.com/backupweb/backupweb/internal/password"
	"github.com/backupweb/backupweb/internal/session"
)

// Metrics holds the collectors. Build it with New; it is safe for
// concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	refused, throttled, signIns, signOuts *prometheus.CounterVec
	tokenRequests                         *prometheus.CounterVec
	bcrypt, gateWait                      prometheus.Histogram
	cache                                 *prometheus.CounterVec
	started, ended                        *prometheus.CounterVec
	idpCalls                              *prometheus.CounterVec
	idpDuration                           *prometheus.HistogramVec
	requests                              *prometheus.CounterVec
	duration                              *prometheus.HistogramVec
	// served holds the request counter and duration observer of each
	// (route, status class) seen, resolved once (servedKey → *servedPair)
	// rather than looked up by label values at every request. Routes are
	// patterns and classes a fixed set, so it stays small.
	served sync.Map
}

// servedKey names one series pair of Served.
type servedKey struct {
	route string
	class int
}

// servedPair is what Served updates for one servedKey.
type servedPair struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

var (
	_ auth.Events       = (*Metrics)(nil)
	_ password.Observer = (*Metrics)(nil)
	_ session.Observer  = (*Metrics)(nil)
)

// New returns the program's metrics, with the Go runtime and process
// collectors and backupweb_build_info registered.
func New() *Metrics {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &Metrics{reg: reg}
	bi := buildinfo.Get()
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "backupweb_build_info",
		Help: "Always 1; the labels say what was built.",
	}, []string{"version", "revision", "goversion"})
	build.WithLabelValues(bi.Version, bi.ShortRevision(), bi.GoVersion).Set(1)
	f(build)
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	m.refused = counterVec(f, "backupweb_auth_refused_total", "Refused authentication attempts, by type and reason (a throttled client counts once per block here; see backupweb_auth_throttled_total).", "type", "reason")
	m.throttled = counterVec(f, "backupweb_auth_throttled_total", "Requests refused because their client address or user name is throttled.", "type")
	m.signIns = counterVec(f, "backupweb_sign_ins_total", "Successful sign-ins (login form, OAuth callback).", "type")
	m.signOuts = counterVec(f, "backupweb_sign_outs_total", "Logouts.", "type")
	m.tokenRequests = counterVec(f, "backupweb_token_requests_total", "Requests admitted by a machine token (Authorization: Bearer); refused tokens are counted in backupweb_auth_refused_total.", "type")
	m.bcrypt = histogram(f, "backupweb_bcrypt_check_duration_seconds", "Time of each bcrypt comparison (its count is the number of checks).",
		[]float64{.01, .025, .05, .1, .25, .5, 1, 2.5})
	m.gateWait = histogram(f, "backupweb_bcrypt_gate_wait_seconds", "Time a password check waited for a free bcrypt slot.",
		[]float64{.001, .01, .05, .1, .25, .5, 1, 2.5, 5})
	m.cache = counterVec(f, "backupweb_credential_cache_lookups_total", "Lookups in the verified-credential cache, by result (hit, miss).", "result")
	m.started = counterVec(f, "backupweb_sessions_started_total", "Sessions started.", "type")
	m.ended = counterVec(f, "backupweb_sessions_ended_total", "Sessions ended, by reason (logout, expired, revoked, limit, user removed).", "type", "reason")
	m.idpCalls = counterVec(f, "backupweb_idp_requests_total", "HTTP requests to the identity provider, by provider and outcome (ok, error: a transport error or a status of 400 or more).", "provider", "outcome")
	m.idpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "backupweb_idp_request_duration_seconds", Help: "Duration of HTTP requests to the identity provider.",
		Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"provider"})
	f(m.idpDuration)
	m.requests = counterVec(f, "backupweb_http_requests_total", "HTTP requests served, by route pattern and status class.", "route", "code")
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "backupweb_http_request_duration_seconds", Help: "Time to serve HTTP requests, by route pattern.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
	}, []string{"route"})
	f(m.duration)
	return m
}

func counterVec(register func(prometheus.Collector), name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	register(c)
	return c
}

func histogram(register func(prometheus.Collector), name, help string, buckets []float64) prometheus.Histogram {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets})
	register(h)
	return h
}

// WatchSessions exports backupweb_sessions_active, asked of count at each
// scrape, when the session type's store can count cheaply (count's ok).
func (m *Metrics) WatchSessions(authType string, count func() (int, bool)) {
	if _, ok := count(); !ok {
		return
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name:        "backupweb_sessions_active",
		Help:        "Sessions held by the session store, at the time of the scrape.",
		ConstLabels: prometheus.Labels{"type": authType},
	}, func() float64 { n, _ := count(); return float64(n) }))
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Hooks returns m as every hook a provider takes (auth.Deps.Hooks):
// authentication outcomes, password checks, sessions started and ended.
func (m *Metrics) Hooks() auth.Hooks {
	return auth.Hooks{Events: m, Password: m, Sessions: m}
}

// Served counts one HTTP request (web.Observer).
func (m *Metrics) Served(route string, status int, d time.Duration) {
	if route == "" {
		route = "unmatched"
	}
	class := status / 100
	if status < 100 || status > 599 {
		class = 0
	}
	k := servedKey{route, class}
	v, ok := m.served.Load(k)
	if !ok {
		v, _ = m.served.LoadOrStore(k, &servedPair{
			count:    m.requests.WithLabelValues(route, statusClass(status)),
			duration: m.duration.WithLabelValues(route),
		})
	}
	p := v.(*servedPair)
	p.count.Inc()
	p.duration.Observe(d.Seconds())
}

// statusClass turns 404 into "4xx".
func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "other"
	}
	return strconv.Itoa(status/100) + "xx"
}

// Refused counts a refused attempt (auth.Events). The reason label is one
// of RefusalReasons: any other text is counted as "other", so that no
// value a client chose (an OAuth error code, a name) can create a series.
func (m *Metrics) Refused(authType, reason string) {
	m.refused.WithLabelValues(authType, fixed(refusalReasons, reason)).Inc()
}

// The fixed sets of label values fed from what happens at run time; any
// other value is counted as "other".
var (
	refusalReasons = setOf(RefusalReasons()...)
	endReasons     = setOf(EndReasons()...)
)

// RefusalReasons returns the values of backupweb_auth_refused_total's
// reason label: the providers' (auth.RefusalReasons, "other" included)
// and the access rules' (access.RefusalReasons).
func RefusalReasons() []string {
	return slices.Concat(auth.RefusalReasons(), access.RefusalReasons())
}

// EndReasons returns the values of backupweb_sessions_ended_total's reason
// label.
func EndReasons() []string {
	return []string{"logout", "expired", "revoked", "limit", "user removed", auth.ReasonOther}
}

func setOf(values ...string) map[string]bool {
	s := make(map[string]bool, len(values))
	for _, v := range values {
		s[v] = true
	}
	return s
}

// fixed returns v when set holds it, "other" otherwise.
func fixed(set map[string]bool, v string) string {
	if set[v] {
		return v
	}
	return auth.ReasonOther
}

// Throttled counts a throttled request (auth.Events).
func (m *Metrics) Throttled(authType string) { m.throttled.WithLabelValues(authType).Inc() }

// SignedIn counts a sign-in (auth.Events).
func (m *Metrics) SignedIn(authType string) { m.signIns.WithLabelValues(authType).Inc() }

// TokenAdmitted counts a request admitted by a machine token
// (auth.TokenObserver).
func (m *Metrics) TokenAdmitted(authType string) { m.tokenRequests.WithLabelValues(authType).Inc() }

// SignedOut counts a logout (auth.Events).
func (m *Metrics) SignedOut(authType string) { m.signOuts.WithLabelValues(authType).Inc() }

// BcryptChecked observes one bcrypt comparison (password.Observer).
func (m *Metrics) BcryptChecked(d time.Duration) { m.bcrypt.Observe(d.Seconds()) }

// GateWaited observes a wait for the bcrypt gate (password.Observer).
func (m *Metrics) GateWaited(d time.Duration) { m.gateWait.Observe(d.Seconds()) }

// CacheLookup counts a credential-cache lookup (password.Observer).
func (m *Metrics) CacheLookup(hit bool) {
	if hit {
		m.cache.WithLabelValues("hit").Inc()
	} else {
		m.cache.WithLabelValues("miss").Inc()
	}
}

// SessionStarted counts a session start (session.Observer).
func (m *Metrics) SessionStarted(authType string) { m.started.WithLabelValues(authType).Inc() }

// SessionsEnded counts ended sessions (session.Observer).
func (m *Metrics) SessionsEnded(authType, reason string, n int) {
	m.ended.WithLabelValues(authType, fixed(endReasons, reason)).Add(float64(n))
}

// InstrumentClient returns a copy of c (http.DefaultClient when nil) whose
// requests are counted and timed as calls to the identity provider
// provider ("google", "github", "gitlab", "generic").
func (m *Metrics) InstrumentClient(provider string, c *http.Client) *http.Client {
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second} // as the oauth type's own default
	}
	cc := *c
	base := cc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	calls, dur := m.idpCalls, m.idpDuration.WithLabelValues(provider)
	cc.Transport = roundTripper(func(r *http.Request) (*http.Response, error) {
		start := time.Now()
		resp, err := base.RoundTrip(r)
		dur.Observe(time.Since(start).Seconds())
		outcome := "ok"
		if err != nil || resp.StatusCode >= 400 {
			outcome = "error"
		}
		calls.WithLabelValues(provider, outcome).Inc()
		return resp, err
	})
	return &cc
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
