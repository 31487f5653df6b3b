package access

import (
	"net/http"
	"net/url"
	"testing"
)

func TestScopePermits(t *testing.T) {
	ro := &Scope{ReadOnly: true}
	db := &Scope{Path: "/backups/db/"}
	dbNoSlash := &Scope{Path: "/backups/db"}
	tests := []struct {
		scope  *Scope
		method string
		target string
		hdr    http.Header
		want   bool
	}{
		{nil, "DELETE", "/x", nil, true},
		{ro, "GET", "/x", nil, true},
		{ro, "HEAD", "/x", nil, true},
		{ro, "POST", "/x", nil, false},
		{ro, "GET", "/x", http.Header{"X-Http-Method-Override": {"DELETE"}}, false},
		{ro, "GET", "/x?_method=PUT", nil, false},
		{db, "GET", "/backups/db/a.sql", nil, true},
		{db, "POST", "/backups/db/a.sql", nil, true},
		{db, "GET", "/backups/dbx/a.sql", nil, false},
		{db, "GET", "/backups/db/../etc/passwd", nil, false},
		{db, "GET", "/backups/db/..%2fetc", nil, false},
		{db, "GET", "/api/backups", nil, false},
		{dbNoSlash, "GET", "/backups/db/a.sql", nil, true},
		{dbNoSlash, "GET", "/backups/db", nil, true},
		{dbNoSlash, "GET", "/backups/dbx", nil, false},
		{db, "GET", "", nil, false}, // the target is unknown
	}
	for _, tt := range tests {
		var u *url.URL
		if tt.target != "" {
			var err error
			if u, err = url.ParseRequestURI(tt.target); err != nil {
				t.Fatal(err)
			}
		}
		if got := tt.scope.Permits(tt.method, u, tt.hdr); got != tt.want {
			t.Errorf("%+v %s %s %v: %v, want %v", tt.scope, tt.method, tt.target, tt.hdr, got, tt.want)
		}
	}
}
