package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRoutes: the list routes answer the catalog's JSON shape, the health
// route ok, anything else 404 or 405.
func TestRoutes(t *testing.T) {
	srv := httptest.NewServer(handler())
	defer srv.Close()
	tests := []struct {
		method, path string
		status       int
		list         bool
	}{
		{"GET", "/api/backups", 200, true},
		{"GET", "/protected/api/backups", 200, true},
		{"GET", "/healthz", 200, false},
		{"GET", "/other", 404, false},
		{"POST", "/api/backups", 405, false},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, srv.URL+tt.path, nil)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Backups []backup `json:"backups"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.path, resp.StatusCode, tt.status)
		}
		if tt.list && (err != nil || len(body.Backups) != 3 || resp.Header.Get("Content-Type") != "application/json") {
			t.Errorf("%s %s: list %v, %v, %q", tt.method, tt.path, body.Backups, err, resp.Header.Get("Content-Type"))
		}
	}
}
