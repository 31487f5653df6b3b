package login

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/auth"
)

// TestPasskeyDocs checks that the Passkeys section of
// docs/second-factor.md names every key, route, reason and log message of
// the passkeys.
func TestPasskeyDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "second-factor.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## Passkeys")
	if !ok {
		t.Fatal("docs/second-factor.md has no Passkeys section")
	}
	for _, w := range []string{
		"`[server] public_url`", "`[authentication] passkey_login`",
		"`" + PasskeysPath + "`", "`" + PasskeysBeginPath + "`", "`" + PasskeysFinishPath + "`", "`" + PasskeysRemovePath + "`",
		"`" + SecondFactorPasskeyBegin + "`", "`" + SecondFactorPasskeyFinish + "`",
		"`" + EnrolPasskeyBegin + "`", "`" + EnrolPasskeyFinish + "`",
		"`" + PasskeyLoginBegin + "`", "`" + PasskeyLoginFinish + "`",
		"`/_backupweb/passkey.js`", "`second_factor = " + SecondFactorPasskey + "`",
		"`" + auth.ReasonPasskeyRefused + "`", "`" + auth.ReasonPasskeyCloned + "`",
		"`auth: passkey added`", "`auth: passkey removed`", "`auth: a passkey registration was refused`",
		"script-src 'self'; connect-src 'self'", "Phishing", "Replay", "Cloned", "go-webauthn/webauthn",
	} {
		if !strings.Contains(section, w) {
			t.Errorf("the Passkeys section does not mention %s", w)
		}
	}
}
