package main

import (
	"errors"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	all := slices.DeleteFunc(scenarioNames(), func(s string) bool { return s == "failover" })
	two := []string{"http://127.0.0.1:1", "http://127.0.0.1:2"}
	tests := []struct {
		name    string
		args    []string
		want    []string // scenarios
		check   func(o options) bool
		wantErr string
	}{
		{name: "defaults", args: nil, want: all, check: func(o options) bool {
			return o.conns == 32 && o.duration == 10*time.Second && o.bin == "" && o.maxRequests == 2_000_000 && o.goal == 100*time.Millisecond
		}},
		{name: "one", args: []string{"-scenario", "logins"}, want: []string{"logins"}},
		{name: "list in table order, once each", args: []string{"-scenario", "flood-basic, basic,basic"}, want: []string{"basic", "flood-basic"}},
		{name: "all in a list", args: []string{"-scenario", "redis,all"}, want: all},
		{name: "flags", args: []string{"-scenario", "proxy", "-duration", "3s", "-conns", "8", "-bin", "/tmp/bw", "-max-requests", "5000", "-goal", "0"},
			want: []string{"proxy"}, check: func(o options) bool {
				return o.conns == 8 && o.duration == 3*time.Second && o.bin == "/tmp/bw" && o.maxRequests == 5000 && o.goal == 0
			}},
		{name: "targets", args: []string{"-targets", "http://127.0.0.1:1/, http://127.0.0.1:2", "-user", "alice", "-until-eof"}, want: []string{"failover"},
			check: func(o options) bool { return slices.Equal(o.targets, two) && o.user == "alice" && o.untilEOF }},
		{name: "targets and failover", args: []string{"-scenario", "failover", "-targets", "http://127.0.0.1:1", "-user", "a"}, want: []string{"failover"}},
		{name: "failover without targets", args: []string{"-scenario", "basic,failover"}, wantErr: "the failover scenario needs -targets"},
		{name: "targets with another scenario", args: []string{"-scenario", "basic", "-targets", "http://127.0.0.1:1", "-user", "a"}, wantErr: "only the failover scenario"},
		{name: "targets without user", args: []string{"-targets", "http://127.0.0.1:1"}, wantErr: "-targets needs -user"},
		{name: "user without targets", args: []string{"-user", "alice"}, wantErr: "-user and -until-eof are for the failover scenario"},
		{name: "target with a path", args: []string{"-targets", "http://127.0.0.1:1/api", "-user", "a"}, wantErr: "not a base URL"},
		{name: "target without a scheme", args: []string{"-targets", "127.0.0.1:1", "-user", "a"}, wantErr: "not a base URL"},
		{name: "unknown scenario", args: []string{"-scenario", "basic,login"}, wantErr: `unknown scenario "login"`},
		{name: "empty name", args: []string{"-scenario", "basic,"}, wantErr: "empty name"},
		{name: "zero duration", args: []string{"-duration", "0s"}, wantErr: "-duration must be positive"},
		{name: "no connections", args: []string{"-conns", "0"}, wantErr: "-conns must be between 1 and 1024"},
		{name: "no requests", args: []string{"-max-requests", "0"}, wantErr: "-max-requests must be at least 1"},
		{name: "negative goal", args: []string{"-goal", "-1s"}, wantErr: "-goal must not be negative"},
		{name: "stray argument", args: []string{"basic"}, wantErr: `unexpected argument "basic"`},
		{name: "unknown flag", args: []string{"-clients", "3"}, wantErr: "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseArgs(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o.scenarios, tt.want) {
				t.Errorf("scenarios %v, want %v", o.scenarios, tt.want)
			}
			if tt.check != nil && !tt.check(o) {
				t.Errorf("options %+v", o)
			}
		})
	}
	if _, err := parseArgs([]string{"-h"}, io.Discard); !errors.Is(err, errHelp) {
		t.Errorf("-h: %v, want errHelp", err)
	}
}

// rightResult records statuses (one latency each) as a right-credential
// part and judges it.
func rightResult(statuses map[int]int, refused int) *result {
	rec := newRecorder()
	for code, n := range statuses {
		for range n {
			rec.add(code, time.Millisecond, nil)
		}
	}
	res := rec.result("basic", time.Second)
	checkRight(res, is2xx, "2xx", refused)
	return res
}

func TestCheckRight(t *testing.T) {
	tests := []struct {
		name     string
		statuses map[int]int
		refused  int
		pass     bool
		reason   string
	}{
		{name: "all 200", statuses: map[int]int{200: 100}, pass: true},
		{name: "2xx of several kinds", statuses: map[int]int{200: 5, 204: 1}, pass: true},
		{name: "one 429", statuses: map[int]int{200: 99, 429: 1}, reason: "1 of 100 answers to a right credential were not 2xx: 429:1"},
		{name: "nginx's 403", statuses: map[int]int{403: 3}, reason: "403:3"},
		{name: "a redirect to the login page", statuses: map[int]int{200: 1, 302: 1}, reason: "302:1"},
		{name: "busy", statuses: map[int]int{303: 1, 503: 1}, reason: "503:1; a 503 is the server at capacity"},
		{name: "a transport error", statuses: map[int]int{200: 1, statusError: 2}, reason: "err:2"},
		{name: "nothing answered", statuses: map[int]int{}, reason: "no request was answered"},
		{name: "an auth refused line", statuses: map[int]int{200: 10}, refused: 1, reason: `logged 1 "auth refused" lines`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := rightResult(tt.statuses, tt.refused)
			if res.passed() != tt.pass {
				t.Fatalf("passed %v, want %v: %s", res.passed(), tt.pass, res.line())
			}
			if !tt.pass && !strings.Contains(res.line(), tt.reason) {
				t.Errorf("line %q does not give the reason %q", res.line(), tt.reason)
			}
		})
	}
}

func TestCheckFlood(t *testing.T) {
	tests := []struct {
		name     string
		statuses map[int]int
		elapsed  time.Duration
		pass     bool
		reason   string
	}{
		{name: "the bound, the rest throttled", statuses: map[int]int{401: 10, 429: 5000}, elapsed: 10 * time.Second, pass: true},
		{name: "one verdict too many", statuses: map[int]int{401: 11, 429: 5000}, elapsed: 10 * time.Second, reason: "11 wrong verdicts, more than 10"},
		{name: "a second window allows twice the bound", statuses: map[int]int{401: 20, 429: 5}, elapsed: 16 * time.Minute, pass: true},
		{name: "busy answers are neither verdicts nor failures", statuses: map[int]int{401: 10, 429: 50, 503: 3}, elapsed: time.Second, pass: true},
		{name: "an unexpected answer", statuses: map[int]int{401: 3, 403: 1}, elapsed: time.Second, reason: "1 answers were neither 401, 429 nor 503"},
		{name: "a grant to a wrong credential", statuses: map[int]int{200: 1, 429: 9}, elapsed: time.Second, reason: "1 answers were neither"},
		{name: "nothing answered", statuses: map[int]int{}, elapsed: time.Second, reason: "no request was answered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &result{name: "flood-basic", elapsed: tt.elapsed, statuses: tt.statuses}
			for _, n := range tt.statuses {
				res.requests += n
			}
			checkFlood(res, countVerdicts(res.statuses), 10, "max_failures = 10 per address", 15*time.Minute)
			if res.passed() != tt.pass {
				t.Fatalf("passed %v, want %v: %s", res.passed(), tt.pass, res.line())
			}
			if !tt.pass && !strings.Contains(res.line(), tt.reason) {
				t.Errorf("line %q does not give the reason %q", res.line(), tt.reason)
			}
			v := countVerdicts(tt.statuses)
			if want := "wrong verdicts " + strconv.Itoa(v.wrong); !strings.Contains(res.line(), want) {
				t.Errorf("line %q does not show %q", res.line(), want)
			}
		})
	}
}

func TestCheckMeasured(t *testing.T) {
	m := func(codes ...int) *result {
		rec := newRecorder()
		for i, c := range codes {
			rec.add(c, time.Duration(i+1)*time.Millisecond, nil)
		}
		return rec.result("measuring", time.Second)
	}
	tests := []struct {
		name     string
		measured *result
		goal     time.Duration
		reason   string
	}{
		{name: "all 200 under the goal", measured: m(200, 200, 200), goal: 100 * time.Millisecond},
		{name: "goal off", measured: m(200, 200, 200), goal: 0},
		{name: "a 429", measured: m(200, 429), goal: time.Second, reason: "answers other than 200"},
		{name: "over the goal", measured: m(200, 200, 200), goal: 2 * time.Millisecond, reason: "p99 3ms is over the goal 2ms"},
		{name: "nothing sent", measured: m(), goal: time.Second, reason: "sent nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &result{name: "flood-login", statuses: map[int]int{}}
			checkMeasured(res, tt.measured, tt.goal)
			if got := !res.passed(); got != (tt.reason != "") {
				t.Fatalf("failed %v, want %v: %s", got, tt.reason != "", res.line())
			}
			if tt.reason != "" && !strings.Contains(res.line(), tt.reason) {
				t.Errorf("line %q does not give the reason %q", res.line(), tt.reason)
			}
		})
	}
}

func TestSummaryLine(t *testing.T) {
	res := rightResult(map[int]int{200: 990, 429: 10}, 0)
	line := res.line()
	want := regexp.MustCompile(`^basic: 1000 requests in 1s, 1000 req/s, statuses 200:990 429:10, p50 1ms p99 1ms; auth refused lines 0: FAIL \(`)
	if !want.MatchString(line) {
		t.Errorf("line %q", line)
	}
	if strings.Contains(line, "\n") {
		t.Errorf("line %q spans several lines", line)
	}
	broken := failed("session", errors.New("backupweb stopped before listening:\nlevel=ERROR msg=\"bad key\"\n"))
	if got := broken.line(); strings.Contains(got, "\n") || !strings.HasSuffix(got, `FAIL (backupweb stopped before listening: | level=ERROR msg="bad key")`) {
		t.Errorf("a part that could not run: line %q", got)
	}
	skipped := &result{name: "redis basic", skipped: "redis-server not found"}
	if got := skipped.line(); got != "redis basic: SKIP (redis-server not found)" {
		t.Errorf("skipped line %q", got)
	}
}

func TestTally(t *testing.T) {
	pass := &result{name: "a"}
	fail := &result{name: "b", problems: []string{"429"}}
	skip := &result{name: "c", skipped: "no redis-server"}
	tests := []struct {
		results []*result
		want    string
	}{
		{nil, "0 passed, 0 failed"},
		{[]*result{pass, pass, fail, skip}, "2 passed, 1 failed"},
		{[]*result{skip}, "0 passed, 0 failed"},
	}
	shape := regexp.MustCompile(`^\d+ passed, \d+ failed$`)
	for _, tt := range tests {
		got := tally(tt.results)
		if got != tt.want || !shape.MatchString(got) {
			t.Errorf("tally = %q, want %q", got, tt.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	lat := make([]time.Duration, 100)
	for i := range lat {
		lat[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		lat  []time.Duration
		q    float64
		want time.Duration
	}{
		{lat, 0.50, 50 * time.Millisecond},
		{lat, 0.99, 99 * time.Millisecond},
		{lat, 1, 100 * time.Millisecond},
		{lat[:1], 0.99, time.Millisecond},
		{nil, 0.5, 0},
	}
	for _, tt := range tests {
		if got := percentile(tt.lat, tt.q); got != tt.want {
			t.Errorf("percentile(%d values, %v) = %s, want %s", len(tt.lat), tt.q, got, tt.want)
		}
	}
}

func TestMetricValue(t *testing.T) {
	text := "# HELP backupweb_bcrypt_check_duration_seconds x\n" +
		"backupweb_bcrypt_check_duration_seconds_bucket{le=\"+Inf\"} 3\n" +
		"backupweb_bcrypt_check_duration_seconds_sum 0.75\n" +
		"backupweb_bcrypt_check_duration_seconds_count 3\n"
	if n, err := metricValue(text, "backupweb_bcrypt_check_duration_seconds_count"); err != nil || n != 3 {
		t.Errorf("count = %v, %v; want 3", n, err)
	}
	if sum, err := metricValue(text, "backupweb_bcrypt_check_duration_seconds_sum"); err != nil || sum != 0.75 {
		t.Errorf("sum = %v, %v; want 0.75", sum, err)
	}
	if _, err := metricValue(text, "backupweb_missing"); err == nil || !strings.Contains(err.Error(), "backupweb_missing not found") {
		t.Errorf("missing metric: %v", err)
	}
}
