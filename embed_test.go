package backupweb_test

import (
	"encoding/json"
	"go/parser"
	"go/token"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
)

// embedder is a program of another module that guards a net/http server
// with nothing but the root package: the configuration file is its first
// argument, the address its second. With -checks DIR it instead checks
// what a Go developer meets first (no type is an error, errors to test, no
// panic on zero values, nil handlers refused at once, Routes on a router
// of its own, FromContext) and prints "checks passed".
const embedder = `package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/backupweb/backupweb"
)

func main() {
	if os.Args[1] == "-checks" {
		checks(os.Args[2])
		fmt.Println("checks passed")
		return
	}
	cfg, err := backupweb.ReadConfig(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	p, err := backupweb.NewProvider("", cfg, backupweb.Options{
		SecretKey: os.Getenv("BACKUP_SECRET_KEY"),
		StateDir:  os.Getenv("STATE_DIR"),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	mux := http.NewServeMux()
	p.Mount(mux)
	mux.Handle("GET /whoami", p.RequireAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := backupweb.CurrentUser(r)
		v, ok2 := backupweb.FromContext(r.Context())
		if !ok || !ok2 || u.Username != v.Username {
			http.Error(w, "no user", http.StatusInternalServerError)
			return
		}
		json.NewEncoder(w).Encode(u.Record())
	})))
	log.Fatal(http.ListenAndServe(os.Args[2], p.Handler(mux)))
}

// prefixRouter is a router that is not http.ServeMux: exact paths, and
// prefixes ending in "/".
type prefixRouter map[string]http.Handler

func (pr prefixRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for path, h := range pr {
		if r.URL.Path == path || strings.HasSuffix(path, "/") && strings.HasPrefix(r.URL.Path, path) {
			h.ServeHTTP(w, r)
			return
		}
	}
	http.NotFound(w, r)
}

func must(ok bool, what string) {
	if !ok {
		log.Fatal("check failed: " + what)
	}
}

func refusedAtOnce(call string, f func()) (ok bool) {
	defer func() {
		msg, _ := recover().(string)
		ok = strings.Contains(msg, call)
	}()
	f()
	return false
}

func checks(dir string) {
	empty := filepath.Join(dir, "empty.ini")
	os.WriteFile(empty, nil, 0o600)
	_, err := backupweb.ReadConfig(empty)
	must(errors.Is(err, backupweb.ErrNoType) && strings.Contains(err.Error(), empty), "an empty file is ErrNoType, naming it")
	_, err = backupweb.NewProvider("", map[string]string{}, backupweb.Options{})
	must(errors.Is(err, backupweb.ErrNoType), "no type is ErrNoType")
	_, err = backupweb.ReadConfig(filepath.Join(dir, "missing.ini"))
	must(errors.Is(err, fs.ErrNotExist), "a missing file is fs.ErrNotExist")
	_, err = backupweb.NewProvider("basic", map[string]string{"username": "a", "password": "a long enough password", "max_failures": "x"}, backupweb.Options{})
	var ce *backupweb.ConfigError
	must(errors.As(err, &ce) && ce.Key == "max_failures", "a bad key is a *ConfigError naming it")

	var zero backupweb.Provider
	rec := httptest.NewRecorder()
	zero.RequireAuth(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	must(rec.Code == http.StatusInternalServerError, "a zero Provider refuses with 500")
	must(zero.Close() == nil && (*backupweb.Provider)(nil).Close() == nil, "Close on zero values")
	_, ok := backupweb.CurrentUser(nil)
	must(!ok, "CurrentUser(nil)")

	p, err := backupweb.NewProvider("basic", map[string]string{"username": "admin", "password": "a long enough password"}, backupweb.Options{})
	must(err == nil, "basic")
	must(refusedAtOnce("RequireAuth", func() { p.RequireAuth(nil) }), "RequireAuth(nil) refused at once")
	must(refusedAtOnce("Handler", func() { p.Handler(nil) }), "Handler(nil) refused at once")
	must(refusedAtOnce("Mount", func() { p.Mount(nil) }), "Mount(nil) refused at once")

	router := prefixRouter{}
	for _, path := range p.Paths() {
		router[path] = p.Routes()
	}
	router["/api/me"] = p.RequireAuth(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := backupweb.FromContext(r.Context())
		fmt.Fprint(w, u.Username)
	}))
	rec = httptest.NewRecorder()
	router.ServeHTTP(rec, httptest.NewRequest("GET", "/_backupweb/style.css", nil))
	must(rec.Code == http.StatusOK, "the stylesheet through Routes on another router")
	req := httptest.NewRequest("GET", "/api/me", nil)
	req.SetBasicAuth("admin", "a long enough password")
	rec = httptest.NewRecorder()
	router.ServeHTTP(rec, req)
	must(rec.Code == http.StatusOK && rec.Body.String() == "admin", "FromContext behind RequireAuth on another router")
}
`

// TestEmbedder builds embedder in a module of its own (a replace to this
// checkout, offline from the module cache), runs it, signs in through its
// login page with its stylesheet served, and reads the user.
func TestEmbedder(t *testing.T) {
	checkout, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/embedder\n\ngo " + strings.TrimPrefix(runtime.Version(), "go") + "\n\n" +
		"require github.com/backupweb/backupweb v0.0.0\n\nreplace github.com/backupweb/backupweb => " + checkout + "\n"
	sum, err := os.ReadFile(filepath.Join(checkout, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "go.mod", gomod)
	writeFile(t, dir, "go.sum", string(sum))
	writeFile(t, dir, "main.go", embedder)
	onlyRootPackage(t, filepath.Join(dir, "main.go"))

	bin := filepath.Join(dir, "embedder")
	build := exec.Command(goTool(), "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod -buildvcs=false", "GOPROXY=off", "GOWORK=off", "GOSUMDB=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of the embedding program (offline, from the module cache): %v\n%s", err, out)
	}

	users := writeFile(t, dir, "users", testkit.Users(t, map[string]string{"alice": "wonderland"}, "alice"))
	conf := writeFile(t, dir, "auth.ini", "[authentication]\ntype = flask-login\nusers_file = "+users+"\nuse_bcrypt = true\nlogin_view = login\n")
	addr := testkit.FreeAddr(t)
	cmd := exec.Command(bin, conf, addr)
	cmd.Env = append(os.Environ(), "BACKUP_SECRET_KEY="+testKey, "STATE_DIR="+filepath.Join(dir, "state"))
	testkit.StartServer(t, cmd, addr, 20*time.Second, nil)
	base := "http://" + addr
	c := testkit.Client()

	checks := exec.Command(bin, "-checks", t.TempDir())
	if out, err := checks.CombinedOutput(); err != nil || !strings.Contains(string(out), "checks passed") {
		t.Fatalf("the embedding program's checks: %v\n%s", err, out)
	}

	resp, err := c.Get(base + "/whoami")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /whoami before sign-in: %d, want 401", resp.StatusCode)
	}
	stylesheetServed(t, c, base+"/login")
	testkit.SignIn(t, c, testkit.Login{Page: base + "/login", User: "alice", Password: "wonderland", Next: "/whoami"})
	resp, err = c.Get(base + "/whoami")
	if err != nil {
		t.Fatal(err)
	}
	var me map[string]any
	err = json.NewDecoder(resp.Body).Decode(&me)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || me["username"] != "alice" || me["auth_type"] != "flask-login" {
		t.Errorf("GET /whoami after sign-in: %d %v %v, want alice of flask-login", resp.StatusCode, me, err)
	}
	// The account page (and its token forms) is not mounted unless
	// Options asks for it.
	resp, err = c.Get(base + "/_backupweb/account")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET /_backupweb/account without Options.AccountPage: %d, want 404", resp.StatusCode)
	}
}

// stylesheetLink finds the stylesheet a page links.
var stylesheetLink = regexp.MustCompile(`<link rel="stylesheet" href="([^"]+)"`)

// stylesheetServed checks that the page at pageURL links a stylesheet
// that is served as text/css.
func stylesheetServed(t *testing.T, c *http.Client, pageURL string) {
	t.Helper()
	resp, err := c.Get(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	page := new(strings.Builder)
	_, err = io.Copy(page, resp.Body)
	resp.Body.Close()
	m := stylesheetLink.FindStringSubmatch(page.String())
	if err != nil || resp.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("GET %s: %d %v, no stylesheet linked:\n%s", pageURL, resp.StatusCode, err, page)
	}
	link, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	css, err := c.Get(link.Scheme + "://" + link.Host + html.UnescapeString(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	css.Body.Close()
	if css.StatusCode != http.StatusOK || !strings.HasPrefix(css.Header.Get("Content-Type"), "text/css") {
		t.Errorf("GET %s: %d %q, want 200 text/css", m[1], css.StatusCode, css.Header.Get("Content-Type"))
	}
}

// onlyRootPackage fails t unless the Go file at path imports the standard
// library and the root package only.
func onlyRootPackage(t *testing.T, path string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if p != "github.com/backupweb/backupweb" && strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
			t.Errorf("the embedding program imports %s", p)
		}
	}
}

// goTool returns the go command of the toolchain that runs this test:
// the one in GOROOT (go test sets it for the test) when there is one,
// else the one on PATH.
func goTool() string {
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
