package sessionauth

import (
	"errors"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/auth"
)

// TestSettingsWarnings checks the rule of the session settings, with
// their defaults applied: an idle timeout longer than the lifetime is a
// warning at session_idle_timeout.
func TestSettingsWarnings(t *testing.T) {
	tests := []struct {
		name string
		set  Settings
		warn bool
	}{
		{"defaults", Settings{}, false},
		{"idle below lifetime", Settings{IdleTimeout: time.Hour, Lifetime: 2 * time.Hour}, false},
		{"idle equal to lifetime", Settings{IdleTimeout: time.Hour, Lifetime: time.Hour}, false},
		{"idle above lifetime", Settings{IdleTimeout: 2 * time.Hour, Lifetime: time.Hour}, true},
		{"idle above the default lifetime", Settings{IdleTimeout: 13 * time.Hour}, true},
		{"lifetime below the default idle", Settings{Lifetime: 10 * time.Minute}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.set.Warnings()
			if (len(got) > 0) != tt.warn {
				t.Fatalf("warnings %v, want any: %v", got, tt.warn)
			}
			for _, err := range got {
				var w *auth.Warning
				var ke *auth.KeyError
				if !errors.As(err, &w) || !errors.As(err, &ke) || ke.Key != "session_idle_timeout" {
					t.Errorf("%v is not a warning at session_idle_timeout", err)
				}
			}
		})
	}
}
