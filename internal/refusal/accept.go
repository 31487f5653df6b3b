package refusal

import (
	"net/http"
	"strings"
)

// Accepts reports whether r's Accept header names the media type want
// ("text/html", "application/json"), whatever r's method. Parameters and
// quality values are not weighed: a type named at all counts.
func Accepts(r *http.Request, want string) bool {
	for _, v := range r.Header.Values("Accept") {
		for item := range strings.SplitSeq(v, ",") {
			mt, _, _ := strings.Cut(item, ";")
			if strings.EqualFold(strings.TrimSpace(mt), want) {
				return true
			}
		}
	}
	return false
}
