package access

import (
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
)

// Check returns a sentence for every rule that can never decide anything:
// one that matches no path, or one that an earlier rule shadows (every
// request it names, an earlier rule names first). The program refuses to
// start with such rules: they are mistakes, and a deny rule that never
// decides protects nothing.
//
// The check is sound, not complete: everything it reports is a real
// mistake, and some mistakes are beyond it (deciding in general whether one
// regular expression covers another is costly). It reports:
//
//   - a pattern that can match nothing at all (such as ^/a\b$x), or whose
//     literal start after ^ does not begin with "/" (^admin): request
//     paths always begin with "/";
//   - a rule j shadowed by an earlier rule i: i names every method j names
//     (i has *, or j's list is within i's), every host j names (i has no
//     host condition, or j's hosts are within i's), everyone j names (i
//     has no subjects; or both have subjects, neither is allow_users, and
//     j's users and groups are within i's), i is not anonymous unless j is
//     (anonymous rules skip paths that are not canonical), and i's pattern
//     covers j's: the same pattern, or i is ^ followed by literal text
//     only (^/admin/, which names every path starting with it) and j's
//     pattern starts with ^ and the same literal text (^/admin/users$).
func (rs *Rules) Check() []string {
	if rs == nil {
		return nil
	}
	var out []string
	for j := range rs.List {
		rj := &rs.List[j]
		if why := neverMatches(rj.Pattern.String()); why != "" {
			out = append(out, fmt.Sprintf("%s (%s) never matches: %s", rj.Name, rj.Source, why))
			continue
		}
		for i := range j {
			if ri := &rs.List[i]; shadows(ri, rj) {
				out = append(out, fmt.Sprintf("%s (%s) never decides: %s (%s) comes first and names every request it names; remove it or move it above %s", rj.Name, rj.Source, ri.Name, ri.Source, ri.Name))
				break
			}
		}
	}
	return out
}

// neverMatches says why pattern can match no request path, or "".
func neverMatches(pattern string) string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return ""
	}
	re = re.Simplify()
	if matchesNothing(re) {
		return "the pattern matches nothing"
	}
	if lit, ok := anchoredLiteral(re); ok && lit != "" && !strings.HasPrefix(lit, "/") {
		return fmt.Sprintf("every request path begins with /, and the pattern requires %q there", lit)
	}
	return ""
}

// matchesNothing reports whether re can match no text at all: an empty
// character class, or a sequence, group or repetition that needs one, or
// alternatives that all do.
func matchesNothing(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpNoMatch:
		return true
	case syntax.OpCharClass:
		return len(re.Rune) == 0
	case syntax.OpConcat, syntax.OpCapture:
		return slices.ContainsFunc(re.Sub, matchesNothing)
	case syntax.OpPlus:
		return matchesNothing(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min > 0 && matchesNothing(re.Sub[0])
	case syntax.OpAlternate:
		return !slices.ContainsFunc(re.Sub, func(s *syntax.Regexp) bool { return !matchesNothing(s) })
	}
	return false
}

// startsAnchored reports whether pattern can only match at the start of a
// path: it begins with ^ (flags such as (?i) may come first).
func startsAnchored(pattern string) bool {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return false
	}
	_, _, anchored := anchoredParts(re.Simplify())
	return anchored
}

// anchoredLiteral returns the literal text that follows ^ at the start of
// re, and whether re starts with ^ at all. Case-folded text is no literal.
func anchoredLiteral(re *syntax.Regexp) (string, bool) {
	lit, _, anchored := anchoredParts(re)
	return lit, anchored
}

// anchoredParts splits re into ^, a literal prefix and whether anything
// follows it (rest).
func anchoredParts(re *syntax.Regexp) (lit string, rest bool, anchored bool) {
	if re.Op != syntax.OpConcat || len(re.Sub) == 0 || re.Sub[0].Op != syntax.OpBeginText {
		return "", false, re.Op == syntax.OpBeginText
	}
	subs := re.Sub[1:]
	var b strings.Builder
	for len(subs) > 0 && subs[0].Op == syntax.OpLiteral && subs[0].Flags&syntax.FoldCase == 0 {
		b.WriteString(string(subs[0].Rune))
		subs = subs[1:]
	}
	return b.String(), len(subs) > 0, true
}

// shadows reports whether earlier rule i names every request that later
// rule j names (see Check).
func shadows(i, j *Rule) bool {
	if i.Policy == Anonymous && j.Policy != Anonymous {
		return false
	}
	if len(i.Methods) > 0 && (len(j.Methods) == 0 || !within(j.Methods, i.Methods)) {
		return false
	}
	if len(i.Hosts) > 0 && (len(j.Hosts) == 0 || !within(j.Hosts, i.Hosts)) {
		return false
	}
	if i.hasSubjects() {
		if i.except || j.except || !j.hasSubjects() || !within(j.Users, i.Users) || !within(j.Groups, i.Groups) {
			return false
		}
	}
	return covers(i.Pattern.String(), j.Pattern.String())
}

// within reports whether every element of a is in b.
func within(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// covers reports whether pattern a matches every path pattern b matches,
// as far as the simple forms of Check tell.
func covers(a, b string) bool {
	if a == b {
		return true
	}
	ra, err := syntax.Parse(a, syntax.Perl)
	if err != nil {
		return false
	}
	la, rest, anchored := anchoredParts(ra.Simplify())
	if !anchored || rest {
		return false
	}
	rb, err := syntax.Parse(b, syntax.Perl)
	if err != nil {
		return false
	}
	lb, _, anchoredB := anchoredParts(rb.Simplify())
	return anchoredB && strings.HasPrefix(lb, la)
}

// Explain returns the effective rules, one a line, in evaluation order:
// each rule's name and the rule as the language writes it (shorthand keys
// expanded), and the default last.
func (rs *Rules) Explain() []string {
	var out []string
	if rs != nil {
		for _, r := range rs.List {
			out = append(out, r.Name+": "+r.String())
		}
	}
	if rs != nil && rs.DefaultDeny {
		out = append(out, DefaultRule+": deny (no rule named the request)")
	} else {
		out = append(out, DefaultRule+": allow any signed-in user (no rule named the request)")
	}
	return out
}

// ExplainHosts returns the line check-config -explain prints about the
// hosts served in catalog and proxy modes (see ServedHosts).
func (rs *Rules) ExplainHosts() string {
	served := rs.ServedHosts()
	if served == nil {
		return "served hosts: any (no rule names hosts)"
	}
	return "served hosts: " + strings.Join(served, ", ") + " (catalog and proxy modes; another Host gets 421, the probes answer any; forward-auth questions are decided by the rules)"
}
