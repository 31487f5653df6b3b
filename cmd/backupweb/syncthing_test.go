package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// startSyncthing runs a real Syncthing (Debian package syncthing) with its
// GUI on a free loopback port, in a fresh home, kept local: no global or
// local discovery, no relays, no NAT traversal, no usage reporting, no
// upgrades, its sync protocol on loopback only. skipHostCheck sets
// insecureSkipHostcheck. It returns the GUI's address.
func startSyncthing(t *testing.T, skipHostCheck bool) string {
	t.Helper()
	bin := toolstest.Need(t, "syncthing", "syncthing")
	home := t.TempDir()
	// STMONITORED=yes: Syncthing runs as one process instead of a monitor
	// that starts the real server in a process group of its own, which
	// the test's group kill would miss.
	env := append(os.Environ(), "HOME="+home, "STNOUPGRADE=1", "STNODEFAULTFOLDER=1", "STMONITORED=yes")
	gen := exec.Command(bin, "generate", "--home", filepath.Join(home, "st"), "--no-default-folder", "--skip-port-probing")
	gen.Env = env
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("syncthing generate: %v\n%s", err, out)
	}
	confPath := filepath.Join(home, "st", "config.xml")
	b, err := os.ReadFile(confPath)
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	replacements := []string{
		"<globalAnnounceEnabled>true", "<globalAnnounceEnabled>false",
		"<localAnnounceEnabled>true", "<localAnnounceEnabled>false",
		"<relaysEnabled>true", "<relaysEnabled>false",
		"<natEnabled>true", "<natEnabled>false",
		"<startBrowser>true", "<startBrowser>false",
		"<urAccepted>0", "<urAccepted>-1",
		"<crashReportingEnabled>true", "<crashReportingEnabled>false",
		"<listenAddress>default</listenAddress>", "<listenAddress>tcp://" + testkit.FreeAddr(t) + "</listenAddress>",
	}
	for i := 0; i < len(replacements); i += 2 {
		if !strings.Contains(conf, replacements[i]) {
			t.Fatalf("syncthing's config.xml has no %s", replacements[i])
		}
		conf = strings.Replace(conf, replacements[i], replacements[i+1], 1)
	}
	if skipHostCheck {
		conf = strings.Replace(conf, "</gui>", "    <insecureSkipHostcheck>true</insecureSkipHostcheck>\n    </gui>", 1)
	}
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	gui := testkit.FreeAddr(t)
	cmd := exec.Command(bin, "serve", "--no-browser", "--no-restart", "--home", filepath.Join(home, "st"), "--gui-address", gui)
	cmd.Env = env
	testkit.StartServer(t, cmd, gui, 15*time.Second, nil)
	return gui
}

// browserLike asks for HTML, as a browser's navigation does, unless the
// request says what it accepts.
type browserLike struct{ rt http.RoundTripper }

func (b browserLike) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Accept") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	}
	return b.rt.RoundTrip(r)
}

// TestSyncthingBehindProxy serves the documentation's Syncthing configuration
// (flask-login in front of a real Syncthing), in both Host settings, to a
// browser that reaches backupweb by a host name Syncthing does not know:
// the GUI page loads and a REST call with Syncthing's own CSRF token
// answers. With pass_host_header = true and Syncthing's host check left
// on, Syncthing refuses: that is why the documentation says to turn it off.
func TestSyncthingBehindProxy(t *testing.T) {
	for _, tt := range []struct {
		name          string
		passHost      bool
		skipHostCheck bool
		works         bool
	}{
		{"default", false, false, true},
		{"pass_host_header with the host check skipped", true, true, true},
		{"pass_host_header with the host check on", true, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			gui := startSyncthing(t, tt.skipHostCheck)
			addr, _ := serveGuardingDoc(t, "Behind backupweb it works as it is", func(ini, _ string) string {
				ini = strings.ReplaceAll(ini, "http://127.0.0.1:8384", "http://"+gui)
				if tt.passHost {
					ini = strings.Replace(ini, "upstream = http://"+gui, "upstream = http://"+gui+"\npass_host_header = true", 1)
				}
				return ini
			})

			// The browser knows the service as sync.example.test.
			_, port, _ := net.SplitHostPort(addr)
			base := "http://sync.example.test:" + port
			jar, _ := cookiejar.New(nil)
			dialer := &net.Dialer{Timeout: 5 * time.Second}
			client := &http.Client{Jar: jar, Timeout: 20 * time.Second, Transport: browserLike{&http.Transport{
				DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
					return dialer.DialContext(ctx, network, addr)
				}}}}
			resp, err := client.Get(base + "/")
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			tok := testkit.FormToken(page)
			if tok == "" {
				t.Fatalf("not sent to the login page: %d\n%.300s", resp.StatusCode, page)
			}
			resp, err = client.PostForm(base+"/login", url.Values{"username": {"alice"}, "password": {"alice-pw"}, "csrf_token": {tok}, "next": {"/"}})
			if err != nil {
				t.Fatal(err)
			}
			page, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if !tt.works {
				if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(page), "Host check error") {
					t.Fatalf("Syncthing's host check let the client's Host in: %d %.200s", resp.StatusCode, page)
				}
				return
			}
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "<title") || !strings.Contains(string(page), "Syncthing") {
				t.Fatalf("Syncthing's GUI through backupweb: %d\n%.300s", resp.StatusCode, page)
			}
			u, _ := url.Parse(base)
			var name, value string
			for _, ck := range jar.Cookies(u) {
				if strings.HasPrefix(ck.Name, "CSRF-Token-") {
					name, value = ck.Name, ck.Value
				}
			}
			if name == "" {
				t.Fatalf("Syncthing set no CSRF cookie through the proxy: %v", jar.Cookies(u))
			}
			for _, call := range []struct{ method, path, want string }{
				{"GET", "/rest/system/version", `"version"`},
				{"POST", "/rest/system/ping", `"pong"`},
			} {
				req, _ := http.NewRequest(call.method, base+call.path, nil)
				req.Header.Set("X-"+name, value)
				req.Header.Set("Accept", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), call.want) {
					t.Errorf("%s %s with Syncthing's CSRF token: %d %.200s", call.method, call.path, resp.StatusCode, body)
				}
			}
			// Without its token, Syncthing itself refuses: its protection
			// is intact behind the proxy.
			resp, err = client.Post(base+"/rest/system/ping", "application/json", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("a REST call without Syncthing's CSRF token: %d, want Syncthing's 403", resp.StatusCode)
			}
		})
	}
}
