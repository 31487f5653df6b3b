package metrics_test

import (
	"github.com/backupweb/backupweb/internal/metrics"
	"github.com/backupweb/backupweb/internal/web"
)

// Metrics observes every request the web handler serves; the assertion
// lives in a test so that package metrics need not import web.
var _ web.Observer = (*metrics.Metrics)(nil)
