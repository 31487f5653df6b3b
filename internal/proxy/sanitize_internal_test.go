package proxy

import "testing"

// TestForged: the rule on header names, case-folded with "_" read as "-".
func TestForged(t *testing.T) {
	reserved := reservedNames(Options{UserHeader: "Remote-User", EmailHeader: "X-Forwarded-Email"})
	tests := []struct {
		name string
		want bool
	}{
		{"Remote-User", true}, {"remote_user", true}, {"REMOTE_USER", true}, {"Remote-Users", false}, {"Remote-Use", false},
		{"X-Forwarded-User", true}, {"X_Forwarded_User", true}, {"x-forwarded_groups", true}, {"X-Forwarded-Email", true},
		{"X-Forwarded-", true}, {"X-Forwarded", false}, {"X-Forwardedx", false}, {"XX-Forwarded-For", false},
		{"X-Real-IP", true}, {"x_real_ip", true}, {"X-Real-IPs", false},
		{"Forwarded", true}, {"FORWARDED", true}, {"Forwarded-For", false},
		{"X-Auth-Request-User", true}, {"x_auth_request_groups", true}, {"X-AUTH-REQUEST-EMAIL", true}, {"X-Auth-Request", false},
		{"Remote-Groups", true}, {"remote_email", true}, {"REMOTE-NAME", true}, {"X-Remote-User", true}, {"x_remote_user", true},
		{"Remote-Addr", false}, {"X-Remote-Users", false},
		{"Cookie", false}, {"X-Custom", false}, {"", false},
		{"X-Forw\u00e4rded-For", false},
		{"X-Original-URL", true}, {"x_original_url", true}, {"X-Rewrite-URL", true}, {"X_REWRITE_URL", true},
		{"x-override-url", true}, {"X-Original-URI", false}, {"X-Original-Method", false},
	}
	for _, tt := range tests {
		if got := forged(tt.name, reserved); got != tt.want {
			t.Errorf("forged(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestOwnCookie: backupweb's cookies under every prefix, and only those.
func TestOwnCookie(t *testing.T) {
	for name, want := range map[string]bool{
		"backupweb_session": true, "__Host-backupweb_session": true, "__Secure-backupweb_csrf": true,
		"__host-backupweb_oauth_x": true, "__SECURE-backupweb_device": true,
		"session": false, "__Host-session": false, "xbackupweb_session": false, "__Host-__Secure-backupweb_session": false,
	} {
		if got := ownCookie(name); got != want {
			t.Errorf("ownCookie(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestDropForgedAllocatesNothing: the rule runs on every proxied request.
func TestDropForgedAllocatesNothing(t *testing.T) {
	reserved := reservedNames(Options{UserHeader: "X-Forwarded-User", EmailHeader: "X-Forwarded-Email"})
	h := map[string][]string{"Accept": nil, "Cookie": nil, "User-Agent": nil, "Accept-Encoding": nil, "X-Original-URI": nil}
	if n := testing.AllocsPerRun(100, func() { dropForged(h, reserved) }); n != 0 {
		t.Errorf("dropForged allocated %v times a call", n)
	}
}
