package ini

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// section parses "[s]\n"+body and returns [s] and the report.
func section(t *testing.T, body string) (*Section, *Report) {
	t.Helper()
	rep := &Report{}
	f := Parse("t.ini", strings.NewReader("[s]\n"+body), rep)
	if rep.HasErrors() {
		t.Fatalf("parse: %v", rep.Err())
	}
	return f.Section("s"), rep
}

func TestBool(t *testing.T) {
	tests := []struct {
		value   string
		want    bool
		wantErr bool
	}{
		{"1", true, false}, {"yes", true, false}, {"true", true, false}, {"on", true, false},
		{"YES", true, false}, {"True", true, false}, {"On", true, false}, {"tRuE", true, false},
		{"0", false, false}, {"no", false, false}, {"false", false, false}, {"off", false, false},
		{"NO", false, false}, {"False", false, false}, {"OFF", false, false},
		{"y", true, true}, {"2", true, true}, {"enabled", true, true}, {"", true, true}, {"'true'", true, true},
	}
	for _, tt := range tests {
		s, rep := section(t, "flag = "+tt.value+"\n")
		// def is true so that a wrong value visibly returns the default.
		if got := s.Bool("flag", true); got != tt.want {
			t.Errorf("Bool(%q) = %v, want %v", tt.value, got, tt.want)
		}
		if rep.HasErrors() != tt.wantErr {
			t.Errorf("Bool(%q): problems %v, want error %v", tt.value, rep.Problems(), tt.wantErr)
		}
		if tt.wantErr {
			p := rep.Problems()[0]
			if p.Key != "flag" || p.Line != 2 || !strings.Contains(p.Msg, "1, yes, true, on, 0, no, false, off") {
				t.Errorf("Bool(%q): problem %#v does not name the key and spellings", tt.value, p)
			}
		}
	}
	s, rep := section(t, "")
	if s.Bool("absent", false) || !s.Bool("absent", true) || rep.HasErrors() {
		t.Error("absent key must give the default without a problem")
	}
}

func TestInt(t *testing.T) {
	tests := []struct {
		value   string
		want    int
		wantErr bool
	}{
		{"5", 5, false}, {"+7", 7, false}, {"1", 1, false}, {"10", 10, false},
		{"0", 3, true}, {"11", 3, true}, {"-1", 3, true}, {"x", 3, true}, {"1.5", 3, true}, {"", 3, true}, {"99999999999999999999", 3, true},
	}
	for _, tt := range tests {
		s, rep := section(t, "n = "+tt.value+"\n")
		if got := s.Int("n", 3, 1, 10); got != tt.want {
			t.Errorf("Int(%q) = %d, want %d", tt.value, got, tt.want)
		}
		if rep.HasErrors() != tt.wantErr {
			t.Errorf("Int(%q): problems %v", tt.value, rep.Problems())
		}
	}
}

func TestDuration(t *testing.T) {
	const def = 7 * time.Minute
	tests := []struct {
		value   string
		want    time.Duration
		wantErr bool
	}{
		{"15m", 15 * time.Minute, false}, {"12h", 12 * time.Hour, false}, {"90s", 90 * time.Second, false},
		{"1h30m", 90 * time.Minute, false}, {"90", 90 * time.Second, false}, {"500ms", 500 * time.Millisecond, false},
		{"0", def, true}, {"0s", def, true}, {"-5m", def, true}, {"-5", def, true}, {"1d", def, true},
		{"abc", def, true}, {"", def, true}, {"99999999999999999999", def, true}, {"9223372036854775807", def, true},
	}
	for _, tt := range tests {
		s, rep := section(t, "d = "+tt.value+"\n")
		if got := s.Duration("d", def); got != tt.want {
			t.Errorf("Duration(%q) = %v, want %v", tt.value, got, tt.want)
		}
		if rep.HasErrors() != tt.wantErr {
			t.Errorf("Duration(%q): problems %v", tt.value, rep.Problems())
		}
	}
}

func TestList(t *testing.T) {
	tests := []struct {
		body string
		want []string
	}{
		{"", nil},
		{"l =\n", nil},
		{"l = a\n", []string{"a"}},
		{"l = a, b ,c\n", []string{"a", "b", "c"}},
		{"l = ,a,,b,\n", []string{"a", "b"}},
		{"l = a,\n  b,\n  c\n", []string{"a", "b", "c"}},
		{"l =\n  a\n  b\n", []string{"a", "b"}},
		{"l = a b\n", []string{"a b"}},
	}
	for _, tt := range tests {
		s, _ := section(t, tt.body)
		if got := s.List("l"); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("List from %q = %q, want %q", tt.body, got, tt.want)
		}
	}
}

func TestStringAndRequire(t *testing.T) {
	s, rep := section(t, "Name = x\nempty =\n")
	if got := s.String("NAME", "d"); got != "x" {
		t.Errorf("String(NAME) = %q: keys must match case-insensitively", got)
	}
	if got := s.String(" name ", "d"); got != "x" {
		t.Errorf("String(\" name \") = %q", got)
	}
	if got := s.String("empty", "d"); got != "" {
		t.Errorf("String(empty) = %q, want \"\"", got)
	}
	if got := s.String("absent", "d"); got != "d" {
		t.Errorf("String(absent) = %q, want d", got)
	}
	if got := s.Require("name"); got != "x" || rep.HasErrors() {
		t.Errorf("Require(name) = %q, %v", got, rep.Problems())
	}
	s.Require("empty")
	s.Require("absent")
	s.RequireHint("other", "set it to the client id")
	want := []string{
		`error: t.ini:3: [s] empty: missing required key (its value is empty); add a line "empty = ..." under [s]`,
		`error: t.ini:1: [s] absent: missing required key; add a line "absent = ..." under [s]`,
		`error: t.ini:1: [s] other: missing required key; set it to the client id`,
	}
	var got []string
	for _, p := range rep.Problems() {
		got = append(got, p.String())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems\n%q\nwant\n%q", got, want)
	}
}

func TestKeysLinesUnused(t *testing.T) {
	f := Parse("t.ini", strings.NewReader("[DEFAULT]\nshared = 1\nb = base\n[s]\nB = 2\na = 3\n"), nil)
	s := f.Section("s")
	if got := s.Keys(); !reflect.DeepEqual(got, []string{"b", "a", "shared"}) {
		t.Errorf("Keys() = %q", got)
	}
	if s.Line("A") != 6 || s.Line("shared") != 2 || s.Line("none") != 0 {
		t.Errorf("Line: a=%d shared=%d none=%d", s.Line("a"), s.Line("shared"), s.Line("none"))
	}
	if v, _ := s.Lookup("b"); v != "2" {
		t.Errorf("section value must win over DEFAULT, got %q", v)
	}
	if !s.Has("a") || s.Has("none") {
		t.Error("Has is wrong")
	}
	if got := s.Unused(); !reflect.DeepEqual(got, []string{"a", "shared"}) {
		t.Errorf("Unused() = %q (Has must not mark keys used)", got)
	}
	s.String("shared", "")
	s.Int("a", 0, 0, 10)
	if got := s.Unused(); got != nil {
		t.Errorf("Unused() = %q, want none", got)
	}
}

func TestSectionProblems(t *testing.T) {
	rep := &Report{}
	f := Parse("t.ini", strings.NewReader("\n[s]\nk = v\n"), rep)
	s := f.Section("s")
	s.Errorf("K", "bad %s", "thing")
	s.Warnf("", "whole section")
	s.Warnf("absent", "x")
	missing := f.Section("nope")
	missing.Errorf("k", "needed")
	if missing.Report() != rep || s.Report() != rep {
		t.Error("sections must record into the file's report")
	}
	want := []string{
		"error: t.ini:3: [s] k: bad thing",
		"warning: t.ini:2: [s] whole section",
		"warning: t.ini:2: [s] absent: x",
		"error: t.ini: [nope] k: needed",
	}
	for i, p := range rep.Problems() {
		if p.String() != want[i] {
			t.Errorf("problem %d = %q, want %q", i, p, want[i])
		}
	}
	var zero Section
	zero.Errorf("k", "no panic on a zero Section")
	if !zero.Report().HasErrors() || zero.String("k", "d") != "d" || zero.Keys() != nil {
		t.Error("zero Section misbehaves")
	}
}

// TestInlineCommentHint: a refused value that holds what looks like an
// inline comment is explained, whatever the getter; a value without one,
// and a message that explains it already, are left as they are.
func TestInlineCommentHint(t *testing.T) {
	tests := []struct {
		name, body string
		get        func(*Section)
		hint       bool
	}{
		{"boolean", "k = True  # yes\n", func(s *Section) { s.Bool("k", false) }, true},
		{"number, tab", "k = 5\t; five\n", func(s *Section) { s.Int("k", 1, 1, 10) }, true},
		{"duration", "k = 12h ; half a day\n", func(s *Section) { s.Duration("k", time.Hour) }, true},
		{"enumeration by the caller", "k = optional ; or required\n", func(s *Section) { s.Errorf("k", "must be off, optional or required") }, true},
		{"no comment", "k = maybe\n", func(s *Section) { s.Bool("k", false) }, false},
		{"hash without a space", "k = a#b\n", func(s *Section) { s.Errorf("k", "refused") }, false},
		{"explained already", "k = x ;y\n", func(s *Section) { s.Errorf("k", "refused; looks like an inline comment") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, rep := section(t, tt.body)
			tt.get(s)
			ps := rep.Problems()
			if len(ps) != 1 {
				t.Fatalf("problems %v, want one", ps)
			}
			if got := strings.Count(ps[0].Msg, "inline comment"); got > 1 {
				t.Fatalf("message %q explains the inline comment %d times", ps[0].Msg, got)
			}
			if has := strings.Contains(ps[0].Msg, "comments must be on lines of their own"); has != tt.hint {
				t.Errorf("message %q: hint %v, want %v", ps[0].Msg, has, tt.hint)
			}
		})
	}
}
