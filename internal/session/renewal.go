package session

import (
	"fmt"
	"net/http"
	"strings"
)

// Renewal says which requests renew a session's idle deadline
// (Options.Renewal, [authentication] idle_renewal).
//
// A page left open in a tab that polls its server in the background
// (Syncthing asks every minute) would otherwise keep its session alive for
// the whole Lifetime: the idle timeout would never fire while the person
// is away. With RenewNavigation, the default, such requests are admitted
// as before but do not count as the person's activity.
type Renewal int

const (
	// RenewNavigation renews the idle deadline only on a request that
	// IsNavigation says a person made: a top-level navigation, or a
	// request without fetch metadata at all (an older browser, curl).
	RenewNavigation Renewal = iota
	// RenewAny renews it on every request the session admits, background
	// requests included: the behaviour before Renewal existed.
	RenewAny
)

// RenewalNames are the values of idle_renewal, in the order of the
// constants.
var RenewalNames = []string{"navigation", "any"}

// String returns the configuration name of r.
func (r Renewal) String() string {
	if int(r) >= 0 && int(r) < len(RenewalNames) {
		return RenewalNames[r]
	}
	return fmt.Sprintf("Renewal(%d)", int(r))
}

// ParseRenewal returns the Renewal named s ("navigation" or "any", in any
// letter case); an empty s is the default, RenewNavigation.
func ParseRenewal(s string) (Renewal, error) {
	if s == "" {
		return RenewNavigation, nil
	}
	for i, n := range RenewalNames {
		if strings.EqualFold(s, n) {
			return Renewal(i), nil
		}
	}
	return 0, fmt.Errorf("session: unknown idle renewal %q; valid values are %s", s, strings.Join(RenewalNames, ", "))
}

// Renews reports whether r renews the idle deadline of the session it
// carries under rule.
func (rule Renewal) Renews(r *http.Request) bool {
	return rule == RenewAny || IsNavigation(r)
}

// IsNavigation reports whether r is a person's doing rather than a page's
// background traffic, from its fetch metadata (which browsers set and
// scripts cannot): Sec-Fetch-Mode "navigate" or Sec-Fetch-Dest "document"
// is a top-level navigation; a request with neither header, and no
// Sec-Fetch-Site either, comes from a client that sends no fetch metadata
// at all and counts as a navigation. A WebSocket upgrade, fetch and
// XMLHttpRequest (modes cors, no-cors, same-origin, websocket) and
// subresources (Sec-Fetch-Dest image, script, empty...) do not.
func IsNavigation(r *http.Request) bool {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return false
	}
	mode, dest := r.Header.Get("Sec-Fetch-Mode"), r.Header.Get("Sec-Fetch-Dest")
	if strings.EqualFold(mode, "navigate") || strings.EqualFold(dest, "document") {
		return true
	}
	return mode == "" && dest == "" && r.Header.Get("Sec-Fetch-Site") == ""
}
