package oauth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/exactjson"
)

// FuzzDecodeLogoutClaims: decodeLogoutClaims never reads a document that
// names a member twice (the oracle duplicateName finds the duplicate
// whenever it reads the document); what it accepts has the back-channel
// logout event as an object, a sub or a sid, a jti and an iat, and no
// nonce, as encoding/json, whose map keys are exact, reads them; and what
// it reads is those exactly named members. The seed corpus is in
// testdata/fuzz/FuzzDecodeLogoutClaims.
func FuzzDecodeLogoutClaims(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		cl, err := decodeLogoutClaims(data)
		dup, ok := duplicateName(data)
		if _, amb := errors.AsType[*exactjson.Error](err); amb && ok && !dup {
			t.Fatalf("refused as ambiguous a document without a duplicate: %v", err)
		}
		if err != nil {
			return
		}
		if !ok || dup {
			t.Fatalf("read a document that is not JSON or names a member twice (ok %v, duplicate %v): %q", ok, dup, data)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("encoding/json cannot read what decodeLogoutClaims read: %v", err)
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		if cl.Issuer != str("iss") || cl.Subject != str("sub") || cl.SessionID != str("sid") || cl.JTI != str("jti") {
			t.Fatalf("read iss %q sub %q sid %q jti %q from %q", cl.Issuer, cl.Subject, cl.SessionID, cl.JTI, data)
		}
		events, _ := m["events"].(map[string]any)
		if _, isObject := events[backchannelEvent].(map[string]any); !isObject {
			t.Fatalf("accepted without the back-channel logout event: %q", data)
		}
		if _, has := m["nonce"]; has {
			t.Fatalf("accepted a nonce: %q", data)
		}
		if cl.Subject == "" && cl.SessionID == "" || cl.JTI == "" || cl.IssuedAt == nil {
			t.Fatalf("accepted without sub or sid, jti or iat: %q", data)
		}
		if iat, _ := m["iat"].(float64); iat != *cl.IssuedAt {
			t.Fatalf("read iat %v, encoding/json %v, from %q", *cl.IssuedAt, m["iat"], data)
		}
	})
}

// FuzzCheckLogoutHeader: a token checkLogoutHeader lets through to the
// signature check is three base64url parts whose header names, once, an
// asymmetric algorithm go-oidc verifies: never none, never an HMAC.
func FuzzCheckLogoutHeader(f *testing.F) {
	enc := base64.RawURLEncoding.EncodeToString
	for _, h := range []string{`{"alg":"RS256","kid":"k"}`, `{"alg":"none"}`, `{"alg":"HS256"}`, `{"alg":"RS256","alg":"none"}`, `{"Alg":"none","alg":"ES256"}`, `{"alg":"NONE"}`} {
		f.Add(enc([]byte(h)) + "." + enc([]byte(`{"sub":"1"}`)) + ".c2ln")
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if checkLogoutHeader(raw) != nil {
			return
		}
		parts := strings.Split(raw, ".")
		if len(parts) != 3 {
			t.Fatalf("let through %d parts", len(parts))
		}
		header, err := base64.RawURLEncoding.DecodeString(parts[0])
		if err != nil {
			t.Fatalf("let through a header that is not base64url: %v", err)
		}
		if dup, ok := duplicateName(header); !ok || dup {
			t.Fatalf("let through a header that is not JSON or names a member twice: %q", header)
		}
		var h map[string]any
		if err := json.Unmarshal(header, &h); err != nil {
			t.Fatalf("encoding/json cannot read the header: %v", err)
		}
		alg, _ := h["alg"].(string)
		if alg == "none" || strings.HasPrefix(alg, "HS") || alg == "" {
			t.Fatalf("let through alg %q: %q", alg, header)
		}
	})
}
