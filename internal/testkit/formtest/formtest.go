// Package formtest is a test's HTTP browser of the site's own pages: a
// client with a cookie jar that navigates (Accept: text/html), posts the
// site's forms with their Origin, posts JSON as the pages' scripts do,
// reads each answer whole, and finds a form's fields in a page. The login
// test kit and the login package's own tests both drive pages with it.
package formtest

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// Reply is a response with its body read.
type Reply struct {
	Status int
	Header http.Header
	Body   string
}

// Client sends a test's requests to the server whose URL Base returns
// (asked at each request: a test may restart its server), with C (its
// cookie jar the browser's), from the client address From when set (sent
// in X-Forwarded-For).
type Client struct {
	T    testing.TB
	Base func() string
	C    *http.Client
	From string
}

// Do sends req and reads the answer whole.
func (c *Client) Do(req *http.Request) Reply {
	c.T.Helper()
	if c.From != "" {
		req.Header.Set("X-Forwarded-For", c.From)
	}
	resp, err := c.C.Do(req)
	if err != nil {
		c.T.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		c.T.Fatal(err)
	}
	return Reply{Status: resp.StatusCode, Header: resp.Header, Body: string(body)}
}

// Get fetches path; html makes it a browser navigation (Accept: text/html).
func (c *Client) Get(path string, html bool) Reply {
	c.T.Helper()
	req, err := http.NewRequest(http.MethodGet, c.Base()+path, nil)
	if err != nil {
		c.T.Fatal(err)
	}
	if html {
		req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	}
	return c.Do(req)
}

// Post sends a form to path with the Origin of the server, as a browser
// submitting one of the site's own forms does.
func (c *Client) Post(path string, form url.Values) Reply {
	c.T.Helper()
	req, err := http.NewRequest(http.MethodPost, c.Base()+path, strings.NewReader(form.Encode()))
	if err != nil {
		c.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.Base())
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	return c.Do(req)
}

// PostJSON posts body to path as the pages' scripts do, with token in
// the header csrfHeader.
func (c *Client) PostJSON(path, csrfHeader, token string, body []byte) Reply {
	c.T.Helper()
	req, err := http.NewRequest(http.MethodPost, c.Base()+path, bytes.NewReader(body))
	if err != nil {
		c.T.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set(csrfHeader, token)
	req.Header.Set("Origin", c.Base())
	return c.Do(req)
}

var (
	inputRE = regexp.MustCompile(`<input[^>]*>`)
	nameRE  = regexp.MustCompile(`name="([^"]*)"`)
	valueRE = regexp.MustCompile(`value="([^"]*)"`)
)

// Field returns the value of the input named name in an HTML page.
func Field(page, name string) (string, bool) {
	for _, in := range inputRE.FindAllString(page, -1) {
		if m := nameRE.FindStringSubmatch(in); m != nil && m[1] == name {
			if v := valueRE.FindStringSubmatch(in); v != nil {
				return v[1], true
			}
			return "", true
		}
	}
	return "", false
}

// PageToken fetches the page at path as a navigation and returns its
// form's csrf_token field, failing the test unless the page is there and
// has one.
func (c *Client) PageToken(path string) string {
	c.T.Helper()
	return c.FormToken(path, "")
}

// FormToken is PageToken of the sign-in page at path, which sends a
// signed-in browser away (303): then the browser reuses last, the token
// of the form it saw before, as a second tab would.
func (c *Client) FormToken(path, last string) string {
	c.T.Helper()
	r := c.Get(path, true)
	if r.Status == http.StatusSeeOther && last != "" {
		return last
	}
	if r.Status != http.StatusOK {
		c.T.Fatalf("GET %s: status %d", path, r.Status)
	}
	tok, ok := Field(r.Body, "csrf_token")
	if !ok || tok == "" {
		c.T.Fatalf("the page %s has no csrf_token field", path)
	}
	return tok
}

// SignIn fetches the sign-in form at path (FormToken) and posts it with
// user, pw and next. It returns the answer and the form token it used.
func (c *Client) SignIn(path, last, user, pw, next string) (Reply, string) {
	c.T.Helper()
	tok := c.FormToken(path, last)
	return c.Post(path, url.Values{"username": {user}, "password": {pw}, "csrf_token": {tok}, "next": {next}}), tok
}
