package proxy_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/proxy"
)

// TestGroupsHeader: the user's groups reach the upstream sorted and
// comma-separated in the configured header, over loopback; the client's
// spellings of it and of X-Forwarded-Groups never do; a user without
// groups, or an empty groups_header, sends none.
func TestGroupsHeader(t *testing.T) {
	got := make(chan http.Header, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Clone() }))
	t.Cleanup(up.Close)
	target, _ := url.Parse(up.URL)
	for _, tt := range []struct {
		name, header string
		groups       []string
		want         string
	}{
		{"default name", "X-Forwarded-Groups", []string{"ops", "admins"}, "admins,ops"},
		{"custom name", "Remote-Groups", []string{"b", "a", "c"}, "a,b,c"},
		{"no groups", "Remote-Groups", nil, ""},
		{"not sent", "", []string{"ops"}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := proxy.New(proxy.Options{Upstream: target, UserHeader: "X-Forwarded-User", GroupsHeader: tt.header})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				u := auth.User{Name: "alice", Type: "basic", Groups: tt.groups}
				h.ServeHTTP(w, r.WithContext(auth.NewContext(r.Context(), u)))
			}))
			defer srv.Close()
			req, _ := http.NewRequest("GET", srv.URL+"/x", nil)
			for _, k := range []string{"Remote_Groups", "REMOTE-GROUPS", "X_Forwarded_Groups", "x-forwarded-groups"} {
				req.Header[k] = []string{"wheel"}
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			hdr := <-got
			// X-Forwarded-Groups is always reserved; another name only
			// when groups_header names it.
			names := []string{"X-Forwarded-Groups"}
			if tt.header != "" && tt.header != "X-Forwarded-Groups" {
				names = append(names, tt.header)
			}
			for _, name := range names {
				want := ""
				if name == tt.header {
					want = tt.want
				}
				vals := folded(hdr, name)
				if want == "" && len(vals) != 0 || want != "" && (len(vals) != 1 || vals[0] != want) {
					t.Errorf("the upstream saw %s = %q, want %q", name, vals, want)
				}
			}
		})
	}
}
