package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// statusError stands for an answer that never came (a transport error) in
// the status counts; it is shown as "err".
const statusError = -1

// recorder collects the statuses and latencies of one part of a scenario.
// It is safe for concurrent use.
type recorder struct {
	mu       sync.Mutex
	statuses map[int]int
	lat      []time.Duration
	errs     []string // the first few transport errors, to name them
}

func newRecorder() *recorder { return &recorder{statuses: map[int]int{}} }

// add records one answer; err is the transport error when there was no
// answer (code is then ignored).
func (r *recorder) add(code int, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		code = statusError
		if len(r.errs) < 3 {
			r.errs = append(r.errs, err.Error())
		}
	}
	r.statuses[code]++
	r.lat = append(r.lat, d)
}

// result is what one part of a scenario measured and what was wrong with it.
type result struct {
	name     string
	requests int
	elapsed  time.Duration
	statuses map[int]int
	// lat is sorted.
	lat []time.Duration
	// detail is shown after the figures (verdict counts, bcrypt checks).
	detail []string
	// problems are why the part failed; none: it passed.
	problems []string
	// skipped says why the part did not run; it then neither passes nor
	// fails.
	skipped string
}

// result returns what r recorded as the result name, over elapsed.
func (r *recorder) result(name string, elapsed time.Duration) *result {
	r.mu.Lock()
	defer r.mu.Unlock()
	lat := slices.Clone(r.lat)
	slices.Sort(lat)
	res := &result{name: name, elapsed: elapsed, statuses: map[int]int{}, lat: lat}
	for code, n := range r.statuses {
		res.statuses[code] = n
		res.requests += n
	}
	if len(r.errs) > 0 {
		res.detail = append(res.detail, "transport errors: "+strings.Join(r.errs, "; "))
	}
	return res
}

// failf records a problem: the part fails. A problem of several lines
// (a server's first log lines) is joined with " | ", so that the summary
// stays one line.
func (res *result) failf(format string, args ...any) {
	msg := strings.TrimSpace(fmt.Sprintf(format, args...))
	res.problems = append(res.problems, strings.ReplaceAll(msg, "\n", " | "))
}

// passed reports whether the part ran and found nothing wrong.
func (res *result) passed() bool { return res.skipped == "" && len(res.problems) == 0 }

// percentile returns the q-quantile (0 < q <= 1) of the sorted latencies.
func percentile(lat []time.Duration, q float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	i := int(q*float64(len(lat))+0.5) - 1
	return lat[min(max(i, 0), len(lat)-1)]
}

// formatStatuses writes status counts in ascending order of status, as
// "200:123 429:4 err:1".
func formatStatuses(statuses map[int]int) string {
	if len(statuses) == 0 {
		return "none"
	}
	codes := make([]int, 0, len(statuses))
	for c := range statuses {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		name := strconv.Itoa(c)
		if c == statusError {
			name = "err"
		}
		parts[i] = name + ":" + strconv.Itoa(statuses[c])
	}
	return strings.Join(parts, " ")
}

// line is the part's one summary line: its name, requests, throughput,
// status counts, p50/p99, details, and PASS, FAIL with the reasons, or
// SKIP with the reason.
func (res *result) line() string {
	if res.skipped != "" {
		return fmt.Sprintf("%s: SKIP (%s)", res.name, res.skipped)
	}
	var b strings.Builder
	rate := 0.0
	if res.elapsed > 0 {
		rate = float64(res.requests) / res.elapsed.Seconds()
	}
	fmt.Fprintf(&b, "%s: %d requests in %s, %.0f req/s, statuses %s, p50 %s p99 %s",
		res.name, res.requests, res.elapsed.Round(time.Millisecond), rate, formatStatuses(res.statuses),
		roundLatency(percentile(res.lat, 0.50)), roundLatency(percentile(res.lat, 0.99)))
	for _, d := range res.detail {
		b.WriteString("; " + d)
	}
	if res.passed() {
		b.WriteString(": PASS")
	} else {
		b.WriteString(": FAIL (" + strings.Join(res.problems, "; ") + ")")
	}
	return b.String()
}

func roundLatency(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// tally is the final line: "N passed, N failed" (skipped parts count in
// neither).
func tally(results []*result) string {
	passed, failed := 0, 0
	for _, r := range results {
		switch {
		case r.skipped != "":
		case r.passed():
			passed++
		default:
			failed++
		}
	}
	return fmt.Sprintf("%d passed, %d failed", passed, failed)
}

// checkRight is the verdict of a right-credential part: every answer must
// satisfy want (a 2xx unless the part says otherwise), there must have
// been at least one answer, and the server must have written no
// "auth refused" line, since nobody sent a wrong credential.
func checkRight(res *result, want func(code int) bool, wantText string, refusedLines int) {
	if res.requests == 0 {
		res.failf("no request was answered")
	}
	bad := map[int]int{}
	n := 0
	for code, count := range res.statuses {
		if !want(code) {
			bad[code] = count
			n += count
		}
	}
	if n > 0 {
		res.failf("%d of %d answers to a right credential were not %s: %s", n, res.requests, wantText, formatStatuses(bad))
	}
	if bad[503] > 0 {
		res.failf("a 503 is the server at capacity (a bcrypt check waited over 5 s for a slot) or its store not answering, not the throttle")
	}
	res.detail = append(res.detail, fmt.Sprintf("auth refused lines %d", refusedLines))
	if refusedLines > 0 {
		res.failf("the server logged %d \"auth refused\" lines for right credentials", refusedLines)
	}
}

// is2xx is the answer a right credential must get.
func is2xx(code int) bool { return code >= 200 && code < 300 }

// verdicts counts a flood's answers: wrong are the verdicts "wrong
// credential" (401), throttled the 429s, busy the 503s a check gets when
// it waited too long for a bcrypt slot (documented, and neither a verdict
// nor a grant); any other answer is unexpected.
type verdicts struct {
	wrong, throttled, busy, other int
}

// countVerdicts splits a flood's status counts into verdicts.
func countVerdicts(statuses map[int]int) verdicts {
	var v verdicts
	for code, n := range statuses {
		switch code {
		case 401:
			v.wrong += n
		case 429:
			v.throttled += n
		case 503:
			v.busy += n
		default:
			v.other += n
		}
	}
	return v
}

// windows is the number of throttling windows a run of length elapsed
// touches: at most max_failures wrong verdicts may be given in each.
func windows(elapsed, window time.Duration) int {
	return 1 + int(elapsed/window)
}

// checkFlood is the verdict of a flood of wrong credentials from one
// address: at most limit wrong verdicts (what = the key that bounds them,
// like "max_failures = 10 per address") in each window the run touched,
// and nothing but 401, 429 and 503.
func checkFlood(res *result, v verdicts, limit int, what string, window time.Duration) {
	bound := limit * windows(res.elapsed, window)
	res.detail = append(res.detail, fmt.Sprintf("wrong verdicts %d (at most %d: %s, window %s), throttled 429 %d, busy 503 %d", v.wrong, bound, what, window, v.throttled, v.busy))
	if v.wrong > bound {
		res.failf("%d wrong verdicts, more than %d (%s)", v.wrong, bound, what)
	}
	if v.other > 0 {
		res.failf("%d answers were neither 401, 429 nor 503", v.other)
	}
	if res.requests == 0 {
		res.failf("no request was answered")
	}
}
