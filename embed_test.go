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
// argument, the address its second.
const embedder = `package main

import (
	"encoding/json"
	"log"
	"net/http"
	"os"

	"github.com/backupweb/backupweb"
)

func main() {
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
		if !ok {
			http.Error(w, "no user", http.StatusInternalServerError)
			return
		}
		json.NewEncoder(w).Encode(u.Record())
	})))
	log.Fatal(http.ListenAndServe(os.Args[2], p.Handler(mux)))
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
