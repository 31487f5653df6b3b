package oauth

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/backupweb/backupweb/internal/exactjson"
)

// keyNames are the members go-oidc and go-jose read from a JSON Web Key
// Set (RFC 7517) with encoding/json: the set's keys, and each key's
// members.
var keyNames = []string{"keys", "alg", "use", "kty", "kid", "crv", "k", "x", "y", "n", "e", "d", "p", "q", "dp", "dq", "qi", "x5c", "x5u", "x5t", "x5t#S256"}

// checkedKeys gives go-oidc, which fetches and decodes the provider's key
// set itself, an HTTP client whose answers are checked with
// exactjson.CheckRead first: a key set that names a member twice, or holds
// a letter-case variant of a member go-oidc or go-jose reads ("KID", "N"),
// never reaches them, so the keys they read are the ones exact names give.
// It remembers whether the last key set fetched was refused as ambiguous,
// for the refusal's log line: go-oidc's errors keep only the text of the
// client's.
//
// It also bounds how often the key set is fetched: go-oidc fetches it
// again whenever a signature does not verify with the keys it holds, and
// anyone may post a logout token with a bad signature, so a fetch within
// keysRefetchInterval of the last one is answered with that one's body
// instead of asking the provider again.
type checkedKeys struct {
	last atomic.Pointer[exactjson.Error]

	mu      sync.Mutex
	body    []byte    // the last key set that passed the check
	fetched time.Time // when it was fetched
}

// keysRefetchInterval is the least time between two fetches of the key
// set from the provider.
const keysRefetchInterval = 5 * time.Second

// recent returns the last key set fetched, when it is younger than
// keysRefetchInterval.
func (k *checkedKeys) recent() ([]byte, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.body == nil || time.Since(k.fetched) >= keysRefetchInterval {
		return nil, false
	}
	return k.body, true
}

// remember keeps body, a key set that passed the check, as the last one.
func (k *checkedKeys) remember(body []byte) {
	k.mu.Lock()
	k.body, k.fetched = body, time.Now()
	k.mu.Unlock()
}

// client returns a copy of base whose answers are checked.
func (k *checkedKeys) client(base *http.Client) *http.Client {
	c := *base
	t := base.Transport
	if t == nil {
		t = http.DefaultTransport
	}
	c.Transport = &keysTransport{base: t, keys: k}
	return &c
}

// refused returns the ambiguity of the last key set fetched, or nil.
func (k *checkedKeys) refused() *exactjson.Error { return k.last.Load() }

// keysTransport is the checking transport of checkedKeys.
type keysTransport struct {
	base http.RoundTripper
	keys *checkedKeys
}

// RoundTrip passes a 200 answer on only when exactjson.CheckRead accepts
// its body (at most maxResponse bytes); any other answer is go-oidc's to
// refuse. Within keysRefetchInterval of the last good answer, that answer
// is given again without asking the provider.
func (t *keysTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if body, ok := t.keys.recent(); ok {
		return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(body)),
			ContentLength: int64(len(body)), Request: req}, nil
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("GET %s: %v", req.URL.Redacted(), err)
	}
	if len(body) > maxResponse {
		return nil, fmt.Errorf("GET %s: the key set is larger than %d bytes", req.URL.Redacted(), maxResponse)
	}
	err = exactjson.CheckRead(body, keyNames...)
	var amb *exactjson.Error
	if errors.As(err, &amb) {
		t.keys.last.Store(amb)
	} else {
		t.keys.last.Store(nil)
	}
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", req.URL.Redacted(), err)
	}
	t.keys.remember(body)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp, nil
}
