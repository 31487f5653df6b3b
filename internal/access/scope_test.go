package access

import (
	"maps"
	"net/http"
	"net/http/httptest"
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
		{ro, "GET", "/x?a=1;_method=DELETE", nil, false},
		{ro, "GET", "/x?_Method=DELETE", nil, false},
		{ro, "GET", "/x?_METHOD=post", nil, false},
		{ro, "GET", "/x", http.Header{"X_http_method_override": {"DELETE"}}, false},
		{ro, "GET", "/x", http.Header{"X_Method_Override": {"DELETE"}}, false},
		{ro, "GET", "/x?_method=get", http.Header{"X-Http-Method": {"HEAD"}}, true},
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
		tg := ReadForwarded(tt.method, tt.target, "h", tt.hdr)
		if got := tt.scope.Allows(tg); got != tt.want {
			t.Errorf("%+v %s %s %v: Allows %v, want %v", tt.scope, tt.method, tt.target, tt.hdr, got, tt.want)
		}
		if tt.target == "" {
			continue
		}
		r := httptest.NewRequest(tt.method, tt.target, nil)
		maps.Copy(r.Header, tt.hdr)
		if got := tt.scope.Permits(r); got != tt.want {
			t.Errorf("%+v %s %s %v: Permits %v, want %v", tt.scope, tt.method, tt.target, tt.hdr, got, tt.want)
		}
	}
}

// TestScopedAs: a listing's request is admitted as the folder it shows,
// with its own methods still counted.
func TestScopedAs(t *testing.T) {
	db := &Scope{Path: "/backups/db/", ReadOnly: true}
	folder := &url.URL{Path: "/backups/db/"}
	r := httptest.NewRequest("GET", "/api/backups?path=db/", nil)
	if db.Permits(r) {
		t.Fatal("the listing is admitted without ScopedAs")
	}
	if !db.Permits(ScopedAs(r, folder)) {
		t.Error("the listing of db/ is refused as /backups/db/")
	}
	r = httptest.NewRequest("GET", "/api/backups?path=db/&_method=DELETE", nil)
	if db.Permits(ScopedAs(r, folder)) {
		t.Error("a read-only token's listing that names DELETE is admitted as the folder")
	}
}
