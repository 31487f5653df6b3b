package access

import "slices"

// ReasonHostNotServed: the request's Host names none of the hosts the
// service answers for (see Rules.Serves).
const ReasonHostNotServed = "host not served"

// NamesHosts reports whether some rule is limited to hosts (rule<N>.hosts).
func (rs *Rules) NamesHosts() bool {
	return rs != nil && slices.ContainsFunc(rs.List, func(r Rule) bool { return len(r.Hosts) > 0 })
}

// ServedHosts returns the hosts the service answers for when it serves
// requests itself (catalog and proxy modes): nil (any host) when no rule
// names hosts; otherwise every host a rule names (".example.com" for its
// sub-domains), in rule order, and PublicHost. A rule limited to hosts
// would otherwise be a deny that a client steps around by writing another
// Host, since the application behind may serve any.
func (rs *Rules) ServedHosts() []string {
	if !rs.NamesHosts() {
		return nil
	}
	var out []string
	for _, r := range rs.List {
		for _, h := range r.Hosts {
			out = appendNew(out, h)
		}
	}
	if h := NormalHost(rs.PublicHost); h != "" {
		out = appendNew(out, h)
	}
	return out
}

// Serves reports whether the service answers for a request whose Host is
// host: always when no rule names hosts, otherwise when host (compared as
// NormalHost gives it: lower case, without port or final dot) is one of
// ServedHosts, or a sub-domain of a ".example.com" among them. An empty
// or unreadable host is not served.
func (rs *Rules) Serves(host string) bool {
	served := rs.ServedHosts()
	if served == nil {
		return true
	}
	h := NormalHost(host)
	return slices.ContainsFunc(served, func(p string) bool { return hostMatches(p, h) })
}
