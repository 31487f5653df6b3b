package metrics_test

import (
	"github.com/backupweb/backupweb/metrics"
	"github.com/backupweb/backupweb/web"
)

// Metrics observes every request the web handler serves; the assertion
// lives in a test so that package metrics need not import web.
var _ web.Observer = (*metrics.Metrics)(nil)
