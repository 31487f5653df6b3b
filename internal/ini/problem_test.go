package ini

import (
	"strings"
	"sync"
	"testing"
)

func TestProblemString(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Severity: Error, File: "a.ini", Line: 3, Section: "server", Key: "listen", Msg: "bad"}, "error: a.ini:3: [server] listen: bad"},
		{Problem{Severity: Warning, File: "a.ini", Line: 3, Section: "server", Key: "listen", Msg: "odd"}, "warning: a.ini:3: [server] listen: odd"},
		{Problem{Severity: Error, File: "a.ini", Msg: "unreadable"}, "error: a.ini: unreadable"},
		{Problem{Severity: Error, Line: 7, Msg: "m"}, "error: line 7: m"},
		{Problem{Severity: Warning, Section: "x", Msg: "m"}, "warning: [x] m"},
		{Problem{Severity: Error, Key: "k", Msg: "m"}, "error: k: m"},
		{Problem{Severity: Error, File: "a.ini", Line: 2, Key: "k", Msg: "m"}, "error: a.ini:2: k: m"},
		{Problem{Msg: "m"}, "error: m"},
	}
	for _, tt := range tests {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestReport(t *testing.T) {
	tests := []struct {
		name      string
		fill      func(r *Report)
		hasErrors bool
		err       string // "" for a nil error
	}{
		{"empty", func(r *Report) {}, false, ""},
		{"warnings only", func(r *Report) { r.Warnf("f", 1, "s", "k", "w%d", 1) }, false, ""},
		{"one error", func(r *Report) {
			r.Warnf("f", 1, "s", "k", "w")
			r.Errorf("f", 2, "s", "k", "e%s", "!")
		}, true, "config: invalid configuration:\nerror: f:2: [s] k: e!"},
		{"two errors", func(r *Report) {
			r.Errorf("f", 2, "", "", "first")
			r.Warnf("f", 3, "", "", "w")
			r.Errorf("", 0, "", "", "second")
		}, true, "config: invalid configuration (2 errors):\nerror: f:2: first\nerror: second"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{}
			tt.fill(r)
			if r.HasErrors() != tt.hasErrors {
				t.Errorf("HasErrors() = %v", !tt.hasErrors)
			}
			err := r.Err()
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("Err() = %v, want nil", err)
			case tt.err != "" && (err == nil || err.Error() != tt.err):
				t.Errorf("Err() = %v, want %q", err, tt.err)
			}
		})
	}
}

func TestReportOrderAndCopy(t *testing.T) {
	r := &Report{}
	r.Errorf("f", 1, "", "", "a")
	r.Warnf("f", 2, "", "", "b")
	ps := r.Problems()
	if len(ps) != 2 || ps[0].Msg != "a" || ps[1].Msg != "b" || ps[1].Severity != Warning {
		t.Fatalf("Problems() = %v", ps)
	}
	ps[0].Msg = "changed"
	if r.Problems()[0].Msg != "a" {
		t.Error("Problems() does not return a copy")
	}
	var nilRep *Report
	if nilRep.Problems() != nil || nilRep.HasErrors() || nilRep.Err() != nil {
		t.Error("a nil report is not empty")
	}
}

func TestReportConcurrent(t *testing.T) {
	r := &Report{}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				r.Warnf("f", j, "", "", "w")
				_ = r.HasErrors()
			}
		}()
	}
	wg.Wait()
	if n := len(r.Problems()); n != 800 {
		t.Fatalf("got %d problems, want 800", n)
	}
	if !strings.HasPrefix(r.Problems()[0].String(), "warning: ") {
		t.Errorf("unexpected rendering %q", r.Problems()[0])
	}
}
