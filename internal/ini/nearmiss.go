package ini

import "strings"

// Suggest returns the candidate that word is most likely a misspelling of:
// the same word in another letter case, a word at most two edits away
// (one for short words; a swap of two neighbouring letters counts as one
// edit), or, for words of three letters or more, a candidate that word
// begins ("auth" for "authentication"). ok is false when nothing is close.
// word itself is never suggested.
func Suggest(word string, candidates []string) (suggestion string, ok bool) {
	w := strings.ToLower(strings.TrimFunc(word, IsSpace))
	best, bestDist := "", 3
	for _, c := range candidates {
		if c == word {
			continue
		}
		lc := strings.ToLower(c)
		if lc == w {
			return c, true
		}
		limit := 2
		if len(lc) <= 5 {
			limit = 1
		}
		if d := editDistance(w, lc); d <= limit && d < bestDist {
			best, bestDist = c, d
		}
	}
	if best != "" {
		return best, true
	}
	if len(w) >= 3 {
		for _, c := range candidates {
			if lc := strings.ToLower(c); lc != w && strings.HasPrefix(lc, w) {
				return c, true
			}
		}
	}
	return "", false
}

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbouring bytes each
// cost one. Inputs are short names, so the quadratic table is cheap.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
