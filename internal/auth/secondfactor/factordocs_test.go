package secondfactor_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/login"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
)

// TestSecondFactorDocs checks that docs/second-factor.md names every key,
// route, cookie and refusal reason of the second factor, and that its
// Passkeys section names every key, route, reason and log message of the
// passkeys.
func TestSecondFactorDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "second-factor.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		section string // "": the whole page
		want    []string
	}{
		{name: "the page", want: []string{
			"`second_factor`", "`factors_file`", "`off`", "`optional`", "`required`",
			"`" + secondfactor.SecondFactorPath + "`", "`" + secondfactor.EnrolPath + "`", "`" + secondfactor.PendingCookie + "`",
			"`" + login.AttrSecondFactor + "`",
			"`" + auth.ReasonBadCode + "`", "`" + auth.ReasonCodeUsed + "`",
			"`" + auth.ReasonPendingExpired + "`", "`" + auth.ReasonFactorsBroken + "`",
			"backupweb user totp -file USERS NAME", "user totp -remove", "user recovery-codes",
			"user factors -reset", "`-factors PATH`", "`-issuer NAME`",
			"## Threats", "## Passkeys", "Phishing", "Replay", "Lost device", "Stolen user file", "Stolen factors file",
			"pquerna/otp",
			"`" + secondfactor.ReauthPath + "`", "`" + login.AttrReauth + "`", "`auth: password given again`", "## The password again",
			"### Two enrolments at once", "409", "`-reset-factors`", "standard error",
		}},
		{name: "the Passkeys section", section: "## Passkeys", want: []string{
			"`[server] public_url`", "`[authentication] passkey_login`",
			"`" + secondfactor.PasskeysPath + "`", "`" + secondfactor.PasskeysBeginPath + "`", "`" + secondfactor.PasskeysFinishPath + "`", "`" + secondfactor.PasskeysRemovePath + "`",
			"`" + secondfactor.SecondFactorPasskeyBegin + "`", "`" + secondfactor.SecondFactorPasskeyFinish + "`",
			"`" + secondfactor.EnrolPasskeyBegin + "`", "`" + secondfactor.EnrolPasskeyFinish + "`",
			"`" + secondfactor.PasskeyLoginBegin + "`", "`" + secondfactor.PasskeyLoginFinish + "`",
			"`/_backupweb/passkey.js`", "`second_factor = " + secondfactor.SecondFactorPasskey + "`",
			"`" + auth.ReasonPasskeyRefused + "`", "`" + auth.ReasonPasskeyCloned + "`",
			"`auth: passkey added`", "`auth: passkey removed`", "`auth: a passkey registration was refused`",
			"script-src 'self'; connect-src 'self'", "Phishing", "Replay", "Cloned", "go-webauthn/webauthn",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc := string(b)
			if tt.section != "" {
				var ok bool
				if _, doc, ok = strings.Cut(doc, tt.section); !ok {
					t.Fatalf("docs/second-factor.md has no %q", tt.section)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(doc, w) {
					t.Errorf("%s of docs/second-factor.md does not mention %s", tt.name, w)
				}
			}
		})
	}
}
