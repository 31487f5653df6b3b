// Package accesslog writes the access log: one line per request, formatted
// by hand (no reflection, no slog handler on the hot path) exactly as the
// program's slog text or JSON handler would write the same record, and
// written through a bounded Buffer that is flushed at least every
// FlushInterval and on Close.
//
// The fields are the contract's: method, path (never the query string),
// status, bytes, duration, client and, when known, user. Headers and
// cookies are not fields, so they can never be logged.
package accesslog

import (
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// Entry is one answered request.
type Entry struct {
	// Time is when the line is written (slog's record time).
	Time time.Time
	// Method and Path are the request's; Path never holds the query.
	Method, Path string
	// Status is the answer's status code.
	Status int
	// Bytes counts the body bytes written.
	Bytes int64
	// Duration is how long the request took.
	Duration time.Duration
	// Client is the resolved client address (peer.Of), as text.
	Client string
	// ClientAddr, when valid, is the client's address and Client is not
	// read: the line holds what ClientAddr.String() returns, written
	// without making that string.
	ClientAddr netip.Addr
	// User is the admitted user's name; HasUser says whether there is one
	// (an empty name is still logged when a provider admitted it).
	User    string
	HasUser bool
}

// Format is how a line is written.
type Format int

const (
	// Text is slog.TextHandler's key=value format.
	Text Format = iota
	// JSON is slog.JSONHandler's one-object-per-line format.
	JSON
)

// Append appends e's line, ending in '\n', to dst in format f.
func (f Format) Append(dst []byte, e *Entry) []byte {
	if f == JSON {
		return AppendJSON(dst, e)
	}
	return AppendText(dst, e)
}

// AppendText appends e as slog.NewTextHandler writes the record
// LogAttrs(ctx, LevelInfo, "request", method, path, status, bytes,
// duration, client[, user]): time with milliseconds, values quoted with
// strconv.Quote when slog would quote them.
func AppendText(dst []byte, e *Entry) []byte {
	if !e.Time.IsZero() {
		dst = append(dst, "time="...)
		dst = appendRFC3339Millis(dst, e.Time)
		dst = append(dst, ' ')
	}
	dst = append(dst, "level=INFO msg=request method="...)
	dst = appendTextString(dst, e.Method)
	dst = append(dst, " path="...)
	dst = appendTextString(dst, e.Path)
	dst = append(dst, " status="...)
	dst = strconv.AppendInt(dst, int64(e.Status), 10)
	dst = append(dst, " bytes="...)
	dst = strconv.AppendInt(dst, e.Bytes, 10)
	dst = append(dst, " duration="...)
	dst = appendDuration(dst, e.Duration)
	dst = append(dst, " client="...)
	if e.ClientAddr.IsValid() {
		dst = appendAddr(dst, e.ClientAddr, false)
	} else {
		dst = appendTextString(dst, e.Client)
	}
	if e.HasUser {
		dst = append(dst, " user="...)
		dst = appendTextString(dst, e.User)
	}
	return append(dst, '\n')
}

// AppendJSON appends e as slog.NewJSONHandler writes the same record as
// AppendText: RFC 3339 time with nanoseconds, the duration in nanoseconds,
// strings escaped as slog escapes them.
func AppendJSON(dst []byte, e *Entry) []byte {
	dst = append(dst, '{')
	if !e.Time.IsZero() {
		dst = append(dst, `"time":"`...)
		dst = e.Time.AppendFormat(dst, time.RFC3339Nano)
		dst = append(dst, `",`...)
	}
	dst = append(dst, `"level":"INFO","msg":"request","method":`...)
	dst = appendJSONString(dst, e.Method)
	dst = append(dst, `,"path":`...)
	dst = appendJSONString(dst, e.Path)
	dst = append(dst, `,"status":`...)
	dst = strconv.AppendInt(dst, int64(e.Status), 10)
	dst = append(dst, `,"bytes":`...)
	dst = strconv.AppendInt(dst, e.Bytes, 10)
	dst = append(dst, `,"duration":`...)
	dst = strconv.AppendInt(dst, int64(e.Duration), 10)
	dst = append(dst, `,"client":`...)
	if e.ClientAddr.IsValid() {
		dst = appendAddr(dst, e.ClientAddr, true)
	} else {
		dst = appendJSONString(dst, e.Client)
	}
	if e.HasUser {
		dst = append(dst, `,"user":`...)
		dst = appendJSONString(dst, e.User)
	}
	return append(dst, "}\n"...)
}

// appendRFC3339Millis is slog's text time: RFC 3339 with exactly three
// digits of milliseconds.
// ClientText is the client as the line writes it: ClientAddr's text when
// it is valid, else Client.
func (e *Entry) ClientText() string {
	if e.ClientAddr.IsValid() {
		return e.ClientAddr.String()
	}
	return e.Client
}

// appendAddr appends a's text as appendString (appendTextString or
// appendJSONString) would write it as a string. An address is digits,
// letters, dots and colons, which neither format escapes and text does not
// quote; one with a zone that would need it goes the long way.
func appendAddr(dst []byte, a netip.Addr, json bool) []byte {
	n := len(dst)
	if json {
		dst = append(dst, '"')
	}
	text := len(dst)
	dst = a.AppendTo(dst)
	for _, c := range dst[text:] {
		if !addrByte(c) {
			if json {
				return appendJSONString(dst[:n], a.String())
			}
			return appendTextString(dst[:n], a.String())
		}
	}
	if json {
		dst = append(dst, '"')
	}
	return dst
}

// addrByte reports whether c is written as itself, unquoted, by both
// formats.
func addrByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.' || c == ':'
}

func appendRFC3339Millis(b []byte, t time.Time) []byte {
	sec := t.Unix()
	s := lastSecond.Load()
	if s == nil || s.unix != sec || s.loc != t.Location() {
		if y := t.Year(); y < 0 || y > 9999 {
			return appendRFC3339MillisSlow(b, t)
		}
		s = &formattedSecond{unix: sec, loc: t.Location()}
		s.date = t.AppendFormat(nil, "2006-01-02T15:04:05.")
		s.zone = t.AppendFormat(nil, "Z07:00")
		lastSecond.Store(s)
	}
	ms := t.Nanosecond() / int(time.Millisecond)
	b = append(b, s.date...)
	b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(b, s.zone...)
}

// formattedSecond is one second of the access lines' time, formatted once:
// a line's time is formatted by appending its milliseconds, where
// time.Time.AppendFormat would parse its layout again for every line.
type formattedSecond struct {
	unix int64
	loc  *time.Location
	date []byte // "2006-01-02T15:04:05."
	zone []byte // "Z" or "+01:00"
}

// lastSecond is the second the last line was written in, shared by every
// writer (the location is part of the key).
var lastSecond atomic.Pointer[formattedSecond]

// appendRFC3339MillisSlow is appendRFC3339Millis for any time, through
// AppendFormat: years outside 0-9999 are written as time writes them.
func appendRFC3339MillisSlow(b []byte, t time.Time) []byte {
	const prefixLen = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10)
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefixLen], b[n+prefixLen+1:]...)
}

// appendDuration appends d.String(): the call is inlined and its string
// does not escape, so it costs no allocation (TestAppendAllocs).
func appendDuration(b []byte, d time.Duration) []byte {
	return append(b, d.String()...)
}

// jsonSafe reports whether the ASCII byte c stands in a JSON string as it
// is (slog's and encoding/json's safe set).
func jsonSafe(c byte) bool { return c >= 0x20 && c != '"' && c != '\\' }

// appendTextString appends s as slog's text handler does: as it is, or
// strconv-quoted when it is empty or holds a space, '=', a quote, a control
// character, a non-printable or invalid rune.
func appendTextString(b []byte, s string) []byte {
	if needsQuoting(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

func needsQuoting(s string) bool {
	if len(s) == 0 {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c != '\\' && (c == ' ' || c == '=' || !jsonSafe(c)) {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

const hex = "0123456789abcdef"

// appendJSONString appends s quoted and escaped as slog's JSON handler
// does: \" \\ \n \r \t, other control bytes as \u00XX, invalid UTF-8 as
// \ufffd, and U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe(c) {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, '\\')
			switch c {
			case '\\', '"':
				b = append(b, c)
			case '\n':
				b = append(b, 'n')
			case '\r':
				b = append(b, 'r')
			case '\t':
				b = append(b, 't')
			default:
				b = append(b, 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, `\u202`...)
			b = append(b, hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
