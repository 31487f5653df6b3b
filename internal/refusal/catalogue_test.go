package refusal

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCatalogueRows(t *testing.T) {
	seen := map[string]Refusal{}
	all := Refusals()
	if len(all) != int(refusalEnd)-1 {
		t.Fatalf("Refusals() has %d rows, the catalogue %d", len(all), refusalEnd-1)
	}
	for _, f := range all {
		row := catalogue[f]
		if row.status < 400 || row.status > 599 || row.message == "" {
			t.Errorf("row %d: status %d, sentence %q: every row refuses with a sentence", f, row.status, row.message)
		}
		if prev, dup := seen[row.message]; dup {
			t.Errorf("rows %d and %d share the sentence %q", prev, f, row.message)
		}
		seen[row.message] = f
		formatted := strings.Contains(row.message, "%")
		if want := f == StaleForm || f == TooManyAttempts || f == TooManyBegun || f == OAuthLogoutToken; formatted != want {
			t.Errorf("row %d: takes arguments %v, want %v", f, formatted, want)
		}
	}
	if got := StaleForm.Message("Syncthing"); !strings.Contains(got, "Go back to Syncthing, reload") {
		t.Errorf("StaleForm.Message = %q", got)
	}
	if Refusal(0).Status() != http.StatusInternalServerError || refusalEnd.Status() != http.StatusInternalServerError {
		t.Error("a refusal outside the catalogue must answer as a server error")
	}
}

func TestErrorsJSONOrPage(t *testing.T) {
	var paged []string
	errs := &Errors{JSONPaths: []string{"/api/"}, Page: func(w http.ResponseWriter, r *http.Request, status int, title, message string) {
		paged = append(paged, title)
		w.WriteHeader(status)
	}}
	for _, tc := range []struct {
		name, path, accept string
		refusal            Refusal
		json               bool
	}{
		{"api path", "/api/me", "text/html", SignInFirst, true},
		{"accept json", "/", "text/html, application/json;q=0.9", NoRoute, true},
		{"page", "/", "text/html", NoRoute, false},
		{"page with title", "/oauth/callback", "", OAuthBadState, false},
		{"other prefix", "/apix", "", NoRoute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paged = nil
			r := httptest.NewRequest("GET", tc.path, nil)
			r.Header.Set("Accept", tc.accept)
			rec := httptest.NewRecorder()
			errs.Refuse(rec, r, tc.refusal)
			if rec.Code != tc.refusal.Status() {
				t.Fatalf("status %d, want %d", rec.Code, tc.refusal.Status())
			}
			isJSON := rec.Header().Get("Content-Type") == "application/json"
			if isJSON != tc.json || isJSON && !strings.Contains(rec.Body.String(), tc.refusal.Message()) {
				t.Fatalf("JSON %v, want %v: %s", isJSON, tc.json, rec.Body.String())
			}
			if !tc.json && (len(paged) != 1 || paged[0] != tc.refusal.Title()) {
				t.Fatalf("page titles %q, want [%q]", paged, tc.refusal.Title())
			}
		})
	}
	if (*Errors)(nil).WantsJSON(httptest.NewRequest("GET", "/api/me", nil)) {
		t.Error("a nil Errors knows no JSON paths")
	}
}
