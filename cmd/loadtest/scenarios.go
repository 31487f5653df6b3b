package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

const (
	goodUser     = "alice"
	goodPassword = "correct horse battery staple"
	// loadSecret is a throwaway BACKUP_SECRET_KEY for the loopback server.
	loadSecret = "4c6f61642074657374206b6579206f6e6c793a206e6f742061207365637265742e"
)

const serverSections = `[server]
listen = 127.0.0.1:0
state_dir = %s/state

[backups]
dir = %s/backups

`

// hash12 returns a cost-12 hash of the good password, as production uses.
func hash12() string {
	h, err := bcrypt.GenerateFromPassword([]byte(goodPassword), 12)
	if err != nil {
		panic(err) // only fails for passwords over 72 bytes
	}
	return string(h)
}

// basicScenario floods wrong Basic passwords at /api/backups.
func basicScenario() scenarioDef {
	return scenarioDef{
		flooders: 16,
		config: serverSections + `[authentication]
type = basic
username = ` + goodUser + `
password = ${LOAD_BASIC_HASH}
use_bcrypt = true
`,
		env: []string{"LOAD_BASIC_HASH=" + hash12()},
		login: func(c *http.Client, base string) (func() (int, error), error) {
			return func() (int, error) {
				req, _ := http.NewRequest("GET", base+"/api/backups", nil)
				req.SetBasicAuth(goodUser, goodPassword)
				return do(c, req)
			}, nil
		},
		flood: func(c *http.Client, base string, i int) func(context.Context) int {
			return func(ctx context.Context) int {
				req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/backups", nil)
				req.SetBasicAuth(goodUser, fmt.Sprintf("wrong-%d", i))
				code, _ := do(c, req)
				return code
			}
		},
	}
}

// loginScenario floods wrong logins at the login page.
func loginScenario() scenarioDef {
	return scenarioDef{
		flooders: 64,
		config: serverSections + `[authentication]
type = flask-login
users_file = %s/users
use_bcrypt = true
`,
		env:   []string{"BACKUP_SECRET_KEY=" + loadSecret},
		files: map[string]string{"users": goodUser + ":" + hash12() + "\n"},
		login: func(c *http.Client, base string) (func() (int, error), error) {
			c.Jar, _ = cookiejar.New(nil)
			token, err := formToken(c, base)
			if err != nil {
				return nil, err
			}
			code, err := postLogin(context.Background(), c, base, token, goodUser, goodPassword)
			if err != nil || code != http.StatusSeeOther {
				return nil, fmt.Errorf("login answered %d, %v", code, err)
			}
			return func() (int, error) {
				req, _ := http.NewRequest("GET", base+"/api/backups", nil)
				return do(c, req)
			}, nil
		},
		flood: func(c *http.Client, base string, i int) func(context.Context) int {
			c.Jar, _ = cookiejar.New(nil)
			token, _ := formToken(c, base)
			user := goodUser
			if i%2 == 1 {
				user = fmt.Sprintf("nobody-%d", i)
			}
			return func(ctx context.Context) int {
				code, _ := postLogin(ctx, c, base, token, user, "wrong password")
				return code
			}
		},
	}
}

var csrfRE = regexp.MustCompile(`name="csrf_token"[^>]*value="([^"]+)"|value="([^"]+)"[^>]*name="csrf_token"`)

// formToken loads the login page and returns its CSRF token.
func formToken(c *http.Client, base string) (string, error) {
	resp, err := c.Get(base + "/login")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	m := csrfRE.FindStringSubmatch(string(body))
	if m == nil {
		return "", fmt.Errorf("no csrf_token on the login page (status %d)", resp.StatusCode)
	}
	return m[1] + m[2], nil
}

func postLogin(ctx context.Context, c *http.Client, base, token, user, pw string) (int, error) {
	form := url.Values{"username": {user}, "password": {pw}, "csrf_token": {token}, "next": {"/"}}
	req, _ := http.NewRequestWithContext(ctx, "POST", base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(c, req)
}

func do(c *http.Client, req *http.Request) (int, error) {
	resp, err := c.Do(req)
	if err != nil {
		return -1, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}
