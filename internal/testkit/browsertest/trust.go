package browsertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/testkit/toolstest"

	"github.com/chromedp/chromedp"
)

// MapHosts makes the browser resolve each of names to ip (Chromium's
// --host-resolver-rules), as a LAN's DNS or /etc/hosts would, without
// touching the machine's resolver. Other names resolve as usual.
func MapHosts(ip string, names ...string) chromedp.ExecAllocatorOption {
	rules := make([]string, len(names))
	for i, n := range names {
		rules[i] = "MAP " + n + " " + ip
	}
	return chromedp.Flag("host-resolver-rules", strings.Join(rules, ", "))
}

// TrustCA makes the browser trust caPEM as a root for web servers, the
// way a person adds their own CA on Linux: an NSS database made with
// certutil (Debian package libnss3-tools) at $HOME/.pki/nssdb, in a
// temporary HOME the browser is started with. Certificates it signed are
// then valid to the browser, not merely accepted despite errors, so pages
// served with them are secure contexts (WebAuthn, Secure cookies).
//
// Without certutil, TrustCA skips t, or fails it when RequireTools().
func TrustCA(t testing.TB, caPEM []byte) chromedp.ExecAllocatorOption {
	t.Helper()
	certutil := toolstest.Need(t, "certutil", "libnss3-tools")
	home := t.TempDir()
	db := filepath.Join(home, ".pki", "nssdb")
	if err := os.MkdirAll(db, 0o700); err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(home, "ca.pem")
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-N", "-d", "sql:" + db, "--empty-password"},
		{"-A", "-d", "sql:" + db, "-n", "backupweb test CA", "-t", "C,,", "-i", caFile},
	} {
		if out, err := exec.Command(certutil, args...).CombinedOutput(); err != nil {
			t.Fatalf("browsertest: certutil %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return chromedp.Env("HOME=" + home)
}
