package access

import (
	"net/http"
	"slices"
	"testing"
)

func TestOverrides(t *testing.T) {
	for _, tt := range []struct {
		name   string
		header map[string]string
		query  string
		want   []string
	}{
		{"none", nil, "", nil},
		{"X-HTTP-Method-Override", map[string]string{"X-HTTP-Method-Override": "DELETE"}, "", []string{"DELETE"}},
		{"X-HTTP-Method", map[string]string{"X-HTTP-Method": "put"}, "", []string{"PUT"}},
		{"X-Method-Override", map[string]string{"X-Method-Override": "PATCH"}, "", []string{"PATCH"}},
		{"any letter case", map[string]string{"x-http-method-override": "DELETE"}, "", []string{"DELETE"}},
		{"underscores", map[string]string{"X_HTTP_Method_Override": "DELETE"}, "", []string{"DELETE"}},
		{"a list", map[string]string{"X-HTTP-Method-Override": "PUT, delete"}, "", []string{"PUT", "DELETE"}},
		{"_method", nil, "_method=DELETE", []string{"DELETE"}},
		{"_method among others", nil, "a=1&_method=delete&b=2", []string{"DELETE"}},
		{"_method after ;", nil, "a=1;_method=PUT", []string{"PUT"}},
		{"_method encoded", nil, "%5Fmethod=%44ELETE", []string{"DELETE"}},
		{"_Method", nil, "_Method=DELETE", []string{"DELETE"}},
		{"_METHOD lower value", nil, "a=1&_METHOD=post", []string{"POST"}},
		{"_method name partly encoded", nil, "_%6D%45thod=PUT", []string{"PUT"}},
		{"_method after ; in any case", nil, "a=1;_MeThOd=DELETE", []string{"DELETE"}},
		{"X_Method_Override", map[string]string{"X_Method_Override": "DELETE"}, "", []string{"DELETE"}},
		{"x_http_method", map[string]string{"x_http_method": "DELETE"}, "", []string{"DELETE"}},
		{"_method twice", nil, "_method=PUT&_method=DELETE", []string{"PUT", "DELETE"}},
		{"other names", map[string]string{"X-HTTP-Methods": "DELETE", "X-Method": "DELETE"}, "method=DELETE&__method=PUT", nil},
		{"empty values", map[string]string{"X-HTTP-Method-Override": " "}, "_method=", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h[k] = []string{v}
			}
			got := Overrides(h, tt.query)
			slices.Sort(got)
			want := slices.Sorted(slices.Values(tt.want))
			if !slices.Equal(got, want) {
				t.Errorf("Overrides = %q, want %q", got, want)
			}
		})
	}
}

// TestDecideOverrides: a request is allowed only when every method it
// names is, and is anonymous only when every method is.
func TestDecideOverrides(t *testing.T) {
	rs := mustRules(t, false, "GET ^/status$ anonymous", "DELETE ^/api/ deny", "PUT ^/api/ second_factor")
	withFactor := carol
	withFactor.SecondFactor = true
	for _, tt := range []struct {
		name      string
		method    string
		overrides []string
		who       Who
		policy    Policy
		rule      string
		ok        bool
	}{
		{"POST alone", "POST", nil, carol, Allow, DefaultRule, true},
		{"POST as DELETE", "POST", []string{"DELETE"}, carol, Deny, "rule2", false},
		{"POST as delete", "POST", []string{"delete"}, carol, Deny, "rule2", false},
		{"POST as PUT, no factor", "POST", []string{"PUT"}, carol, SecondFactor, "rule3", false},
		{"POST as PUT, factor", "POST", []string{"PUT"}, withFactor, Allow, DefaultRule, true},
		{"POST as PUT and DELETE", "POST", []string{"PUT", "DELETE"}, withFactor, Deny, "rule2", false},
		{"DELETE as GET", "DELETE", []string{"GET"}, carol, Deny, "rule2", false},
		{"unknown method as DELETE", "", []string{"DELETE"}, carol, Deny, DefaultRule, false}, // ambiguous already
	} {
		t.Run(tt.name, func(t *testing.T) {
			tg := target(tt.method, "/api/x", "h")
			tg.Overrides = tt.overrides
			d := rs.Decide(tg, tt.who)
			if d.Policy != tt.policy || d.Rule != tt.rule || d.Permits(tt.who) != tt.ok {
				t.Errorf("decision %+v (permits %v), want %s %s %v", d, d.Permits(tt.who), tt.policy, tt.rule, tt.ok)
			}
		})
	}
	anon := target("GET", "/status", "h")
	if d := rs.Decide(anon, nobody); d.Policy != Anonymous {
		t.Fatalf("GET /status: %+v", d)
	}
	for _, o := range []string{"POST", "DELETE"} {
		anon.Overrides = []string{o}
		if d := rs.Decide(anon, nobody); d.Policy == Anonymous || d.Permits(nobody) {
			t.Errorf("GET /status as %s is anonymous: %+v", o, d)
		}
	}
	anon.Overrides = []string{"HEAD"}
	if d := rs.Decide(anon, nobody); d.Policy != Anonymous {
		t.Errorf("GET /status as HEAD: %+v, want anonymous (a GET rule names HEAD)", d)
	}
}

// TestOverridesAllocateNothing: a request that names no other method
// costs no allocation to check (it runs for every guarded request).
func TestOverridesAllocateNothing(t *testing.T) {
	h := http.Header{"Accept": {"text/html"}, "X-Requested-With": {"XMLHttpRequest"}, "X_Custom_Header": {"1"}, "User-Agent": {"test"}}
	tg := target("GET", "/api/backups?page=2&sort=name", "h")
	if n := testing.AllocsPerRun(100, func() { tg = readHeaders(tg, h) }); n != 0 || tg.Overrides != nil {
		t.Errorf("%v allocations, overrides %q; want none", n, tg.Overrides)
	}
}
