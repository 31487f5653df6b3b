package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/crypto/bcrypt"

	"github.com/backupweb/backupweb/internal/testkit"
)

const (
	goodUser     = "alice"
	goodPassword = "correct horse battery staple"
	// loadSecret is a throwaway BACKUP_SECRET_KEY for the loopback servers.
	loadSecret = "4c6f61642074657374206b6579206f6e6c793a206e6f742061207365637265742e"
	// hashCost is the cost of every stored hash: production's default, so
	// that a check takes as long as it does for real users.
	hashCost = 12

	// The throttling settings of every configuration, written out so that
	// the flood's bound is computed from what the server was told.
	maxFailures     = 10
	maxUserFailures = 5
	failureWindow   = "15m"
	// officeUsers is how many people the user file holds for the
	// simultaneous logins (the largest burst).
	officeUsers = 20
)

// officeUser returns the name and password of the i-th person of the user
// file (i from 1); person 0 is alice.
func officeUser(i int) (name, password string) {
	if i == 0 {
		return goodUser, goodPassword
	}
	return fmt.Sprintf("user%02d", i), fmt.Sprintf("office password %02d, long enough", i)
}

var hashes [officeUsers + 1]struct {
	once sync.Once
	hash string
}

// hashOf returns the cost-12 hash of person i's password (officeUser),
// computed once.
func hashOf(i int) string {
	h := &hashes[i]
	h.once.Do(func() {
		_, pw := officeUser(i)
		b, err := bcrypt.GenerateFromPassword([]byte(pw), hashCost)
		if err != nil {
			panic(err) // only for passwords over 72 bytes, which these are not
		}
		h.hash = string(b)
	})
	return h.hash
}

// usersFile is the flask-login user file: alice and the office users,
// whose hashes are computed in parallel the first time.
func usersFile() string {
	var wg sync.WaitGroup
	for i := range hashes {
		wg.Go(func() { hashOf(i) })
	}
	wg.Wait()
	var b strings.Builder
	for i := range hashes {
		name, _ := officeUser(i)
		b.WriteString(name + ":" + hashOf(i) + "\n")
	}
	return b.String()
}

// serverKeys are extra [server] lines (store = redis).
type serverKeys string

// basicSpec is type basic with alice's hash; more is appended to the
// configuration (a [proxy] or [redis] section).
func basicSpec(server serverKeys, more string) serverSpec {
	return serverSpec{
		config: metricsSection + string(server) + backupsSection + fmt.Sprintf(`
[authentication]
type = basic
username = %s
password = ${LOAD_BASIC_HASH}
use_bcrypt = true
max_failures = %d
failure_window = %s
`, goodUser, maxFailures, failureWindow) + more,
		env: []string{"LOAD_BASIC_HASH=" + hashOf(0)},
	}
}

// sessionSpec is type flask-login with the user file; more is appended to
// the configuration.
func sessionSpec(server serverKeys, more string) serverSpec {
	return serverSpec{
		config: metricsSection + string(server) + backupsSection + fmt.Sprintf(`
[authentication]
type = flask-login
users_file = %%s/users
use_bcrypt = true
max_failures = %d
max_user_failures = %d
failure_window = %s
`, maxFailures, maxUserFailures, failureWindow) + more,
		env:   []string{"BACKUP_SECRET_KEY=" + loadSecret},
		files: map[string]string{"users": usersFile()},
	}
}

// withBasic sets alice's right Basic credential.
func withBasic(r *http.Request) { r.SetBasicAuth(goodUser, goodPassword) }

// signIn logs alice in through the form with client c (its cookie jar is
// replaced) and returns the cookies of her session.
func signIn(c *http.Client, base string) ([]*http.Cookie, error) {
	return signInAs(c, base, goodUser, goodPassword)
}

// signInAs logs user in with password through the form with client c
// (its cookie jar is replaced) and returns the cookies of the session.
func signInAs(c *http.Client, base, user, password string) ([]*http.Cookie, error) {
	c.Jar = newJar()
	token, err := formToken(c, base)
	if err != nil {
		return nil, err
	}
	code, err := postLogin(context.Background(), c, base, token, user, password)
	if err != nil {
		return nil, fmt.Errorf("POST /login: %w", err)
	}
	if code != http.StatusSeeOther {
		return nil, &statusErr{what: "POST /login with the right password", code: code}
	}
	u, _ := url.Parse(base)
	return c.Jar.Cookies(u), nil
}

// withCookies returns a client of its own connection, from localIP, whose
// jar holds cookies (a signed-in session).
func withCookies(localIP, base string, cookies []*http.Cookie) *http.Client {
	c := newClient(localIP)
	c.Jar = newJar()
	u, _ := url.Parse(base)
	c.Jar.SetCookies(u, cookies)
	return c
}

// newJar returns an empty cookie jar.
func newJar() http.CookieJar {
	j, _ := cookiejar.New(nil) // New never fails without options
	return j
}

// formToken loads the login page and returns its CSRF token.
func formToken(c *http.Client, base string) (string, error) {
	resp, err := c.Get(base + "/login")
	if err != nil {
		return "", fmt.Errorf("GET /login: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	tok := testkit.FormToken(body)
	if tok == "" {
		return "", fmt.Errorf("no csrf_token on the login page (status %d)", resp.StatusCode)
	}
	return tok, nil
}

// postLogin posts the login form and returns the status.
func postLogin(ctx context.Context, c *http.Client, base, token, user, pw string) (int, error) {
	form := url.Values{"username": {user}, "password": {pw}, "csrf_token": {token}, "next": {"/"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/login", strings.NewReader(form.Encode()))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(c, req)
}
