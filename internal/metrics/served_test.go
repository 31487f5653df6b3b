package metrics_test

import (
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/metrics"
)

// TestServedSeries: each route and status class is its own series, counted
// and timed, and a request of a series already seen costs no allocation.
func TestServedSeries(t *testing.T) {
	m := metrics.New()
	tests := []struct {
		route  string
		status int
	}{
		{"GET /api/backups", 200},
		{"GET /api/backups", 200},
		{"GET /api/backups", 304},
		{"GET /api/backups", 404},
		{"", 404},
		{"proxy", 999},
	}
	for _, tt := range tests {
		m.Served(tt.route, tt.status, time.Millisecond)
	}
	body := scrape(t, m)
	want := map[string]float64{
		`backupweb_http_requests_total{code="2xx",route="GET /api/backups"}`:        2,
		`backupweb_http_requests_total{code="3xx",route="GET /api/backups"}`:        1,
		`backupweb_http_requests_total{code="4xx",route="GET /api/backups"}`:        1,
		`backupweb_http_requests_total{code="4xx",route="unmatched"}`:               1,
		`backupweb_http_requests_total{code="other",route="proxy"}`:                 1,
		`backupweb_http_request_duration_seconds_count{route="GET /api/backups"}`:   4,
		`backupweb_http_request_duration_seconds_count{route="unmatched"}`:          1,
		`backupweb_http_request_duration_seconds_bucket{route="proxy",le="0.0005"}`: 0,
		`backupweb_http_request_duration_seconds_bucket{route="proxy",le="0.001"}`:  1,
		`backupweb_http_request_duration_seconds_count{route="proxy"}`:              1,
	}
	for series, v := range want {
		if got := value(body, series); got != v {
			t.Errorf("%s = %v, want %v", series, got, v)
		}
	}
	if n := testing.AllocsPerRun(100, func() { m.Served("GET /api/backups", 200, time.Millisecond) }); n != 0 {
		t.Errorf("Served of a known series: %v allocations, want 0", n)
	}
}
