package login

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/backupweb/backupweb/auth"
)

// TestSecondFactorDocs checks that docs/second-factor.md names every key,
// route, cookie and refusal reason of the second factor, and keeps the
// Passkeys section.
func TestSecondFactorDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "second-factor.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	want := []string{
		"`second_factor`", "`factors_file`", "`off`", "`optional`", "`required`",
		"`" + SecondFactorPath + "`", "`" + EnrolPath + "`", "`" + PendingCookie + "`",
		"`" + AttrSecondFactor + "`",
		"`" + auth.ReasonBadCode + "`", "`" + auth.ReasonCodeUsed + "`",
		"`" + auth.ReasonPendingExpired + "`", "`" + auth.ReasonFactorsBroken + "`",
		"backupweb user totp -file USERS NAME", "user totp -remove", "user recovery-codes",
		"user factors -reset", "`-factors PATH`", "`-issuer NAME`",
		"## Threats", "## Passkeys", "Phishing", "Replay", "Lost device", "Stolen user file", "Stolen factors file",
		"pquerna/otp",
	}
	for _, w := range want {
		if !strings.Contains(doc, w) {
			t.Errorf("docs/second-factor.md does not mention %s", w)
		}
	}
}
