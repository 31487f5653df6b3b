package oauth

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// githubOrgScopes are the scopes under which GitHub lists an account's
// private organisation and team memberships; without one of them
// GET /user/orgs lists public memberships only, silently.
var githubOrgScopes = []string{"read:org", "write:org", "admin:org"}

// githubGroups reads a GitHub account's organisations (GET /user/orgs) and
// teams (GET /user/teams), every page, under the user endpoint's URL.
// Groups are organisation logins and "org/team-slug". An access token
// whose granted scopes (GitHub's X-OAuth-Scopes header) lack read:org is
// refused: GitHub would have hidden the private memberships.
func githubGroups(f *fetchContext, _ identity) ([]string, error) {
	base := strings.TrimRight(f.cfg.UserinfoURL, "/")
	orgs, h, err := listPages[struct {
		Login string `json:"login"`
	}](f, base+"/orgs?per_page="+perPage)
	if err != nil {
		return nil, fmt.Errorf("%w: %w (the application needs the scope read:org)", errGroups, err)
	}
	if granted, said := h[http.CanonicalHeaderKey("X-OAuth-Scopes")]; said {
		scopes := strings.FieldsFunc(strings.Join(granted, ","), func(c rune) bool { return c == ',' || c == ' ' })
		if !slices.ContainsFunc(scopes, func(s string) bool { return slices.Contains(githubOrgScopes, s) }) {
			return nil, fmt.Errorf("%w: GitHub granted the scopes %q, without read:org, so it lists public memberships only; add read:org to scopes", errGroups, printable(strings.Join(scopes, ","), 200))
		}
	}
	teams, _, err := listPages[struct {
		Slug         string `json:"slug"`
		Organization struct {
			Login string `json:"login"`
		} `json:"organization"`
	}](f, base+"/teams?per_page="+perPage)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errGroups, err)
	}
	groups := make([]string, 0, len(orgs)+len(teams))
	for _, o := range orgs {
		if o.Login == "" {
			return nil, fmt.Errorf("%w: GitHub listed an organisation without a login", errGroups)
		}
		groups = append(groups, o.Login)
	}
	for _, t := range teams {
		if t.Slug == "" || t.Organization.Login == "" {
			return nil, fmt.Errorf("%w: GitHub listed a team without a slug or organisation", errGroups)
		}
		groups = append(groups, t.Organization.Login+"/"+t.Slug)
	}
	return groups, nil
}

// gitlabAPIScopes are the scopes that let backupweb list an account's
// groups through GitLab's REST API; without one, the groups come from the
// groups claim of GitLab's user-information endpoint (scope openid).
var gitlabAPIScopes = []string{"read_api", "api"}

// gitlabGroups reads a GitLab account's groups, as full paths: with the
// scope read_api (or api), from GET /api/v4/groups?min_access_level=10,
// every page (the access level limits the list to groups the account is a
// member of; without it GitLab lists every group the account can see);
// otherwise from the groups claim of GET /oauth/userinfo (scope openid),
// whose subject must be the account's. Both under base_url.
func gitlabGroups(f *fetchContext, id identity) ([]string, error) {
	base := strings.TrimRight(f.cfg.BaseURL, "/")
	if slices.ContainsFunc(f.cfg.Scopes, func(s string) bool { return slices.Contains(gitlabAPIScopes, s) }) {
		list, _, err := listPages[struct {
			FullPath string `json:"full_path"`
		}](f, base+"/api/v4/groups?min_access_level=10&per_page="+perPage)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errGroups, err)
		}
		groups := make([]string, 0, len(list))
		for _, g := range list {
			if g.FullPath == "" {
				return nil, fmt.Errorf("%w: GitLab listed a group without full_path", errGroups)
			}
			groups = append(groups, g.FullPath)
		}
		return groups, nil
	}
	info, err := userinfoClaims(f.ctx, f.c, f.tok, base+"/oauth/userinfo")
	if err != nil {
		return nil, fmt.Errorf("%w: %w (the application needs the scope openid)", errGroups, err)
	}
	if info.Subject == "" || info.Subject != id.Subject {
		return nil, fmt.Errorf("%w: GitLab's user information is about another account than /api/v4/user", errGroups)
	}
	groups, problem := claimGroups(info.Claims["groups"])
	if problem != "" {
		return nil, fmt.Errorf("%w: GitLab's groups claim is %s", errGroups, problem)
	}
	return groups, nil
}

// listPages reads every page of a JSON array listing that paginates with
// the Link header (rel="next"), as GitHub's and GitLab's APIs do, and
// returns the entries and the first page's header. A next page at another
// scheme or host than first is refused (the token is not sent elsewhere),
// as is a listing longer than maxPages pages or maxGroups entries.
func listPages[T any](f *fetchContext, first string) ([]T, http.Header, error) {
	origin, err := url.Parse(first)
	if err != nil {
		return nil, nil, err
	}
	var all []T
	var head http.Header
	next := first
	for n := 0; next != ""; n++ {
		if n == maxPages {
			return nil, nil, fmt.Errorf("GET %s: more than %d pages; the account is refused rather than admitted with part of its groups", first, maxPages)
		}
		var page []T
		h, err := getJSONHeader(f.ctx, f.c, f.tok, next, &page)
		if err != nil {
			return nil, nil, err
		}
		if head == nil {
			head = h
		}
		all = append(all, page...)
		if len(all) > maxGroups {
			return nil, nil, fmt.Errorf("GET %s: more than %d entries; the account is refused rather than admitted with part of its groups", first, maxGroups)
		}
		if next, err = nextLink(h, origin); err != nil {
			return nil, nil, fmt.Errorf("GET %s: %w", first, err)
		}
	}
	return all, head, nil
}

// nextLink returns the URL of the Link header's rel="next" entry, resolved
// against origin, or "" when there is none. A next page at another scheme
// or host than origin is an error.
func nextLink(h http.Header, origin *url.URL) (string, error) {
	for _, v := range h.Values("Link") {
		for _, part := range strings.Split(v, ",") {
			target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
			target = strings.TrimSpace(target)
			if !ok || !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") || !relNext(params) {
				continue
			}
			u, err := origin.Parse(target[1 : len(target)-1])
			if err != nil {
				return "", fmt.Errorf("the Link header's next page is not a URL: %v", err)
			}
			if u.Scheme != origin.Scheme || u.Host != origin.Host {
				return "", fmt.Errorf("the Link header's next page is at %s://%s, not at the API's address", u.Scheme, u.Host)
			}
			return u.String(), nil
		}
	}
	return "", nil
}

// relNext reports whether the Link parameters params hold rel="next" (rel
// may list several relations).
func relNext(params string) bool {
	for _, p := range strings.Split(params, ";") {
		name, value, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "rel") {
			continue
		}
		for _, rel := range strings.Fields(strings.Trim(strings.TrimSpace(value), `"`)) {
			if strings.EqualFold(rel, "next") {
				return true
			}
		}
	}
	return false
}
