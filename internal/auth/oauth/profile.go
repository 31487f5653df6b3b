package oauth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/oauth2"

	"github.com/backupweb/backupweb/internal/exactjson"
)

// verified says what the provider told about an e-mail address.
type verified int

const (
	verifiedUnknown verified = iota // the provider did not say
	verifiedYes
	verifiedNo
)

// identity is what the provider told about the account that signed in.
type identity struct {
	Email    string
	Verified verified
	Name     string
	Subject  string
	// SessionID is the ID token's sid claim: the identity provider's
	// session the sign-in belongs to, which a logout token may name.
	SessionID string
	// IDToken is the verified ID token, kept with the session as the
	// id_token_hint of RP-initiated logout; empty without OpenID Connect.
	IDToken string
	// HostedDomain is Google's hd claim: the Workspace domain that hosts
	// the account; empty for a personal account.
	HostedDomain string
	// Claims are every claim of the ID token or user-information answer
	// the identity came from, kept raw for the groups claim (read with
	// exactjson.Decode); nil for GitHub and GitLab's REST APIs.
	Claims map[string]jsontext.Value
}

// profileFunc reads the signed-in account from the provider's API with the
// access token. userinfo is the user-information endpoint.
type profileFunc func(ctx context.Context, c *http.Client, tok *oauth2.Token, userinfo string) (identity, error)

// maxResponse bounds what is read from a provider's API.
const maxResponse = 1 << 20

// errProfile marks failures to read the account: unreachable endpoint,
// unexpected status, unparseable answer. An answer that names a member
// twice is an *exactjson.Error in its chain too.
var errProfile = errors.New("oauth: reading the account from the identity provider")

// getJSON fetches url with the access token and decodes its JSON answer
// into v with exactjson.Decode: by exact member names, an object naming a
// member twice refused (*exactjson.Error). The error never includes the
// token; it names the URL and the status, or the decoding problem.
func getJSON(ctx context.Context, c *http.Client, tok *oauth2.Token, url string, v any) error {
	_, err := getJSONHeader(ctx, c, tok, url, v)
	return err
}

// getJSONHeader is getJSON that also returns the answer's header (for
// pagination links and granted scopes).
func getJSONHeader(ctx context.Context, c *http.Client, tok *oauth2.Token, url string, v any) (http.Header, error) {
	h, err := fetchJSON(ctx, c, tok, url, v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errProfile, err)
	}
	return h, nil
}

// fetchJSON fetches url, with the access token tok unless it is nil, reads
// at most maxResponse bytes of a 200 answer and decodes them into v with
// exactjson.Decode. Errors name the URL and the status or the decoding
// problem, never the token.
func fetchJSON(ctx context.Context, c *http.Client, tok *oauth2.Token, url string, v any) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	if tok != nil {
		tok.SetAuthHeader(req)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "backupweb")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %v", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %s", url, resp.Status)
	}
	if err := exactjson.Decode(body, v); err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	return resp.Header, nil
}

// claims are the OpenID Connect standard claims backupweb reads, from an
// ID token or a user-information answer, by their exact names (see
// decodeClaims).
type claims struct {
	Subject           string    `json:"sub"`
	Email             string    `json:"email"`
	EmailVerified     *flexBool `json:"email_verified"`
	Name              string    `json:"name"`
	PreferredUsername string    `json:"preferred_username"`
	HostedDomain      string    `json:"hd"`
	SessionID         string    `json:"sid"`
}

func (c claims) identity() identity {
	id := identity{Email: c.Email, Subject: c.Subject, Name: cmp.Or(c.Name, c.PreferredUsername), HostedDomain: c.HostedDomain, SessionID: c.SessionID}
	if c.EmailVerified != nil {
		id.Verified = verifiedNo
		if *c.EmailVerified {
			id.Verified = verifiedYes
		}
	}
	return id
}

// flexBool is a JSON boolean that some providers send as the string "true"
// or "false" (email_verified).
type flexBool bool

func (b *flexBool) UnmarshalJSON(data []byte) error {
	switch string(data) {
	case "true", `"true"`:
		*b = true
	case "false", `"false"`:
		*b = false
	default:
		return errors.New("email_verified is neither true nor false")
	}
	return nil
}

// userinfoProfile reads the standard claims from the user-information
// endpoint (provider generic without OpenID Connect).
func userinfoProfile(ctx context.Context, c *http.Client, tok *oauth2.Token, userinfo string) (identity, error) {
	return userinfoClaims(ctx, c, tok, userinfo)
}

// userinfoClaims reads the user-information endpoint: the standard claims
// and, kept raw, every claim it returned.
func userinfoClaims(ctx context.Context, c *http.Client, tok *oauth2.Token, userinfo string) (identity, error) {
	var body jsontext.Value
	if err := getJSON(ctx, c, tok, userinfo, &body); err != nil {
		return identity{}, err
	}
	id, _, err := decodeClaims(body)
	if err != nil {
		return identity{}, fmt.Errorf("%w: GET %s: %w", errProfile, userinfo, err)
	}
	return id, nil
}

// decodeClaims is the one reader of claims, from an ID token's payload or
// a user-information answer: the standard claims by their exact names
// (email_verified as true or "true" under that name only, hd likewise
// exact), every claim kept raw for the groups claim, and azp. A member
// named twice, at any depth, is an *exactjson.Error: no claim is read
// from such an object. A letter-case variant ("Email", "EMAIL",
// "Email_verified", "HD") is another claim, which nothing reads.
func decodeClaims(data []byte) (id identity, azp string, err error) {
	var cl struct {
		claims
		AuthorizedParty string `json:"azp"`
	}
	var all map[string]jsontext.Value
	if err := exactjson.Decode(data, &all); err != nil {
		return identity{}, "", err
	}
	if err := exactjson.Decode(data, &cl); err != nil {
		return identity{}, "", err
	}
	id = cl.claims.identity()
	id.Claims = all
	return id, cl.AuthorizedParty, nil
}

// githubProfile reads a GitHub account: the name from the user endpoint and
// the e-mail from <user endpoint>/emails, the primary address only, with
// GitHub's verified flag. The account's public e-mail is not used: it may
// be empty, and GitHub says nothing about its verification there.
func githubProfile(ctx context.Context, c *http.Client, tok *oauth2.Token, userinfo string) (identity, error) {
	var user struct {
		ID    int64  `json:"id"`
		Login string `json:"login"`
		Name  string `json:"name"`
	}
	if err := getJSON(ctx, c, tok, userinfo, &user); err != nil {
		return identity{}, err
	}
	var emails []struct {
		Email    string `json:"email"`
		Primary  bool   `json:"primary"`
		Verified bool   `json:"verified"`
	}
	if err := getJSON(ctx, c, tok, strings.TrimRight(userinfo, "/")+"/emails", &emails); err != nil {
		return identity{}, fmt.Errorf("%w (the application needs the scope user:email, or for a GitHub App the \"Email addresses\" permission)", err)
	}
	id := identity{Name: cmp.Or(user.Name, user.Login), Subject: fmt.Sprint(user.ID)}
	for _, e := range emails {
		if e.Primary {
			id.Email, id.Verified = e.Email, verifiedNo
			if e.Verified {
				id.Verified = verifiedYes
			}
			break
		}
	}
	return id, nil
}

// gitlabProfile reads a GitLab account from the user endpoint: its e-mail,
// verified when GitLab records a confirmation time (confirmed_at).
func gitlabProfile(ctx context.Context, c *http.Client, tok *oauth2.Token, userinfo string) (identity, error) {
	var user struct {
		ID          int64   `json:"id"`
		Username    string  `json:"username"`
		Name        string  `json:"name"`
		Email       string  `json:"email"`
		ConfirmedAt *string `json:"confirmed_at"`
	}
	if err := getJSON(ctx, c, tok, userinfo, &user); err != nil {
		return identity{}, err
	}
	id := identity{Email: user.Email, Name: cmp.Or(user.Name, user.Username), Subject: fmt.Sprint(user.ID), Verified: verifiedNo}
	if user.ConfirmedAt != nil && *user.ConfirmedAt != "" {
		id.Verified = verifiedYes
	}
	return id, nil
}

// cleanName makes a display name safe to keep: no control characters, at
// most 200 bytes.
func cleanName(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "")
	}
	return s
}
