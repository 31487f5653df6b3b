package web

import (
	"net/http"
	"sync/atomic"
	"time"
)

// dateValue is the Date header's value for one second.
type dateValue struct {
	unix  int64
	value []string // shared, never modified
}

// dateCache keeps the Date value of the latest second an answer was
// dated in.
type dateCache struct{ last atomic.Pointer[dateValue] }

// answerDates dates the answers of every handler.
var answerDates dateCache

// httpDate returns answerDates' value for now (see dateCache.value).
func httpDate(now time.Time) []string { return answerDates.value(now) }

// value returns the Date header's value for now, formatted once per
// second and shared by every answer dated in that second. net/http formats
// the date for each answer that has none; the JSON answers and the
// forward-authentication 200, which are written at once after their
// headers are set, take it from here instead.
func (c *dateCache) value(now time.Time) []string {
	sec := now.Unix()
	if d := c.last.Load(); d != nil && d.unix == sec {
		return d.value
	}
	d := &dateValue{unix: sec, value: []string{now.UTC().Format(http.TimeFormat)}[:1:1]}
	c.last.Store(d)
	return d.value
}
