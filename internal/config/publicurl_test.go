package config

import (
	"strings"
	"testing"
)

// TestParsePublicURL drives every rule of [server] public_url.
func TestParsePublicURL(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string // the URL kept; "" when refused
		msg  string // part of the refusal
	}{
		{raw: "https://backups.example.com", want: "https://backups.example.com"},
		{raw: "https://backups.example.com/", want: "https://backups.example.com"},
		{raw: "HTTPS://Backups.Example.COM:8443", want: "https://backups.example.com:8443"},
		{raw: "http://localhost:8080", want: "http://localhost:8080"},
		{raw: "http://LOCALHOST", want: "http://localhost"},
		{raw: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{raw: "http://[::1]:8080", want: "http://[::1]:8080"},
		{raw: "https://10.0.0.5", want: "https://10.0.0.5"},
		{raw: "http://backups.example.com", msg: "plain http"},
		{raw: "http://10.0.0.5:8080", msg: "plain http"},
		{raw: "http://localhost.example.com", msg: "plain http"},
		{raw: "http://127.0.0.2", msg: "plain http"},
		{raw: "", msg: "not a URL"},
		{raw: " https://backups.example.com", msg: "not a URL"},
		{raw: "backups.example.com", msg: "not an absolute http or https URL"},
		{raw: "/login", msg: "not an absolute http or https URL"},
		{raw: "ftp://backups.example.com", msg: "not an absolute http or https URL"},
		{raw: "https:backups.example.com", msg: "not an absolute http or https URL"},
		{raw: "https://user:pw@backups.example.com", msg: "user name or password"},
		{raw: "https://backups.example.com/?a=1", msg: "query or fragment"},
		{raw: "https://backups.example.com/#top", msg: "query or fragment"},
		{raw: "https://backups.example.com/backups", msg: "has a path"},
		{raw: "https://:8443", msg: "no host name"},
		{raw: "https://exa mple.com", msg: "not a URL"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			u, err := ParsePublicURL(tc.raw)
			if tc.want != "" {
				if err != nil || u.String() != tc.want {
					t.Fatalf("ParsePublicURL(%q) = %v, %v; want %s", tc.raw, u, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParsePublicURL(%q) = %v; want a refusal", tc.raw, u)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
			if !strings.Contains(err.Error(), "https://") {
				t.Errorf("error %q does not say how to fix it", err)
			}
		})
	}
}

// TestLoadPublicURL checks that Load reads the key, names file, line and
// key of a bad value, and leaves it unset by default.
func TestLoadPublicURL(t *testing.T) {
	cfg := Load(writeConfig(t, "[server]\npublic_url = https://backups.example.com/\n"), lookupEnv)
	if cfg.Report.HasErrors() || cfg.Server.PublicURL == nil || cfg.Server.PublicURL.String() != "https://backups.example.com" {
		t.Fatalf("PublicURL %v, problems %v", cfg.Server.PublicURL, cfg.Report.Problems())
	}
	path := writeConfig(t, "[server]\nlisten = 127.0.0.1:0\npublic_url = http://backups.example.com\n")
	cfg = Load(path, lookupEnv)
	if cfg.Server.PublicURL != nil || !cfg.Report.HasErrorsAt("server", "public_url") {
		t.Fatalf("PublicURL %v, problems %v", cfg.Server.PublicURL, cfg.Report.Problems())
	}
	p := cfg.Report.Problems()[0]
	if p.File != path || p.Line != 3 || p.Key != "public_url" || !strings.Contains(p.Msg, "https://") {
		t.Errorf("problem %+v", p)
	}
	if cfg := Load(writeConfig(t, "[server]\n"), lookupEnv); cfg.Server.PublicURL != nil || cfg.Report.HasErrors() {
		t.Errorf("unset: PublicURL %v, problems %v", cfg.Server.PublicURL, cfg.Report.Problems())
	}
}
