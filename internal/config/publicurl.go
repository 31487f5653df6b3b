package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/backupweb/backupweb/internal/ini"
)

// publicURLHint says what [server] public_url must look like; every
// problem with the key ends with it.
const publicURLHint = "set it to the address users type in their browser, such as https://backups.example.com (http only for localhost, 127.0.0.1 or ::1)"

// ParsePublicURL checks [server] public_url: the absolute URL users reach
// the service at. It must be http or https with a host, without user
// information, query or fragment; plain http is refused unless the host is
// loopback (localhost, 127.0.0.1, ::1), since passkeys bind sign-in to this
// origin and browsers offer them only to secure origins. A path other than
// "/" is refused too: the service's own routes (/login, /_backupweb/...)
// sit at the root of its host. An IP address is accepted here (redirects
// work with one); passkeys need a host name, which package passkey checks.
// The result has no trailing slash in its
// path, a lower-case scheme and host, and is the value's origin.
func ParsePublicURL(raw string) (*url.URL, error) {
	if strings.TrimSpace(raw) != raw || raw == "" {
		return nil, fmt.Errorf("%q is not a URL; %s", raw, publicURLHint)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL (%v); %s", raw, unwrapURL(err), publicURLHint)
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https" || u.Opaque != "" || u.Host == "":
		return nil, fmt.Errorf("%q is not an absolute http or https URL; %s", raw, publicURLHint)
	case u.User != nil:
		return nil, fmt.Errorf("%q holds a user name or password; %s", raw, publicURLHint)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, fmt.Errorf("%q has a query or fragment; %s", raw, publicURLHint)
	case u.Path != "" && u.Path != "/":
		return nil, fmt.Errorf("%q has a path; the service is reached at the root of its host: %s", raw, publicURLHint)
	case u.Hostname() == "":
		return nil, fmt.Errorf("%q has no host name; %s", raw, publicURLHint)
	}
	host := strings.ToLower(u.Hostname())
	if scheme == "http" && !IsLoopbackHost(host) {
		return nil, fmt.Errorf("%q uses plain http on a host that is not loopback: browsers refuse passkeys there and the session cookie would cross the network unencrypted; write https:// (a TLS proxy in front of the service) or use localhost for a test", raw)
	}
	out := &url.URL{Scheme: scheme, Host: strings.ToLower(u.Host)}
	return out, nil
}

// IsLoopbackHost reports whether host (without port or brackets) is
// localhost, 127.0.0.1 or ::1: the hosts browsers treat as secure over
// plain http.
func IsLoopbackHost(host string) bool {
	switch strings.ToLower(host) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// loadPublicURL reads [server] public_url (default unset).
func loadPublicURL(s *ini.Section) *url.URL {
	raw, ok := s.Lookup("public_url")
	if !ok {
		return nil
	}
	u, err := ParsePublicURL(raw)
	if err != nil {
		s.Errorf("public_url", "%v", err)
		return nil
	}
	return u
}

// unwrapURL returns the reason of a url.Error without the URL it repeats.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
