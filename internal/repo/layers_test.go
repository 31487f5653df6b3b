package repo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/backupweb/backupweb/"

// allowed is every edge of the module's import graph (non-test files):
// package -> the module packages it may import. A package missing here
// may import nothing of the module. Lower layers come first; an edge that
// points up, or sideways between domain packages, does not belong here.
var allowed = map[string][]string{
	// Leaves: no import of the module.
	"internal/access":     nil,
	"internal/accesslog":  nil,
	"internal/attrs":      nil,
	"internal/buildinfo":  nil,
	"internal/catalog":    nil,
	"internal/exactjson":  nil,
	"internal/filewatch":  nil,
	"internal/fspath":     nil,
	"internal/once":       {"internal/atomicfile"},
	"internal/atomicfile": nil,
	"internal/password":   nil,
	"internal/peer":       nil,
	"internal/refusal":    nil,
	"internal/secretkey":  nil,
	"internal/session":    {"internal/atomicfile", "internal/attrs"},
	"internal/throttle":   nil,
	"internal/tlscert":    {"internal/filewatch", "internal/fspath"},
	"internal/acmecert":   {"internal/fspath", "internal/secretkey", "internal/tlscert"},

	// Formats and files.
	"internal/ini":       {"internal/fspath"},
	"internal/userfile":  {"internal/atomicfile", "internal/password"},
	"internal/qr":        nil,
	"internal/groupfile": {"internal/filewatch"},
	"internal/factors":   {"internal/atomicfile", "internal/filewatch", "internal/secretkey", "internal/userfile"},
	"internal/tokens":    {"internal/atomicfile", "internal/filewatch"},
	"internal/passkey":   {"internal/attrs", "internal/factors", "internal/once", "internal/session", "internal/userstate"},
	"internal/userstate": {"internal/factors", "internal/tokens"},
	"internal/ui":        {"internal/catalog"},

	// The core and the types.
	"internal/auth":              {"internal/attrs", "internal/peer", "internal/refusal"},
	"internal/auth/none":         {"internal/auth", "internal/refusal"},
	"internal/directory":         {"internal/auth"},
	"internal/auth/passwordauth": {"internal/auth", "internal/password", "internal/throttle", "internal/refusal"},
	"internal/auth/basic":        {"internal/attrs", "internal/atomicfile", "internal/auth", "internal/directory", "internal/auth/passwordauth", "internal/password", "internal/peer", "internal/throttle", "internal/refusal"},
	"internal/auth/sessionauth":  {"internal/auth", "internal/fspath", "internal/ui", "internal/peer", "internal/session", "internal/refusal"},
	"internal/auth/secondfactor": {"internal/attrs", "internal/auth", "internal/auth/sessionauth", "internal/exactjson", "internal/factors", "internal/qr", "internal/ui", "internal/passkey", "internal/peer", "internal/session", "internal/throttle", "internal/userfile", "internal/refusal", "internal/userstate"},
	"internal/auth/login":        {"internal/attrs", "internal/access", "internal/auth", "internal/directory", "internal/auth/passwordauth", "internal/auth/secondfactor", "internal/auth/sessionauth", "internal/factors", "internal/filewatch", "internal/fspath", "internal/once", "internal/ui", "internal/passkey", "internal/password", "internal/peer", "internal/session", "internal/throttle", "internal/tokens", "internal/userfile", "internal/refusal", "internal/secretkey", "internal/userstate"},
	"internal/auth/oauth":        {"internal/attrs", "internal/auth", "internal/auth/sessionauth", "internal/exactjson", "internal/filewatch", "internal/once", "internal/ui", "internal/peer", "internal/session", "internal/throttle", "internal/refusal"},

	// Stores, HTTP surface, guarding, operations.
	"internal/redisstore": {"internal/factors", "internal/fspath", "internal/session", "internal/throttle", "internal/tokens", "internal/userstate", "internal/secretkey"},
	"internal/web":        {"internal/access", "internal/accesslog", "internal/auth", "internal/catalog", "internal/peer", "internal/ui", "internal/refusal"},
	"internal/proxy":      {"internal/access", "internal/auth", "internal/peer", "internal/session", "internal/refusal"},
	"internal/metrics":    {"internal/access", "internal/auth", "internal/buildinfo", "internal/password", "internal/session"},

	// The program's sections (they read [redis] into the store's options).
	"internal/config": {"internal/access", "internal/fspath", "internal/ini", "internal/redisstore", "internal/tlscert"},

	// The wiring: the one table of types, the per-type loaders, Check and
	// Open.
	"internal/app": {"internal/access", "internal/auth", "internal/directory", "internal/auth/basic", "internal/auth/passwordauth", "internal/auth/login", "internal/auth/none", "internal/auth/oauth", "internal/auth/sessionauth", "internal/groupfile", "internal/catalog", "internal/config", "internal/ini", "internal/metrics", "internal/ui", "internal/web", "internal/passkey", "internal/peer", "internal/proxy", "internal/redisstore", "internal/session", "internal/throttle", "internal/refusal", "internal/atomicfile", "internal/factors", "internal/fspath", "internal/tokens", "internal/userstate", "internal/secretkey", "internal/tlscert", "internal/acmecert"},

	// The public face (the module root, package backupweb): the
	// specification's interface for other Go programs, built on the
	// wiring so that a provider is built one way only.
	".": {"internal/auth", "internal/groupfile", "internal/app", "internal/config", "internal/ini", "internal/ui", "internal/web", "internal/refusal"},

	// The program: flags, signals, prompts and printing.
	"cmd/backupweb":         {"internal/acmecert", "internal/access", "internal/auth", "internal/auth/login", "internal/factors", "internal/accesslog", "internal/app", "internal/buildinfo", "internal/catalog", "internal/config", "internal/directory", "internal/fspath", "internal/ini", "internal/metrics", "internal/qr", "internal/web", "internal/password", "internal/redisstore", "internal/secretkey", "internal/session", "internal/tokens", "internal/tlscert", "internal/ui", "internal/userfile", "internal/userstate"},
	"internal/cmd/loadtest": {"internal/testkit/redistest", "internal/testkit", "internal/testkit/toolstest"},

	// The benchmark's plain server: the standard library only.
	"internal/cmd/benchplain": nil,

	// Test kits.
	"internal/repo":                 nil,
	"internal/testkit/benchtest":    nil,
	"internal/testkit/certtest":     nil,
	"internal/testkit/browsertest":  {"internal/testkit/toolstest"},
	"internal/testkit/clocktest":    nil,
	"internal/testkit/logtest":      nil,
	"internal/testkit/oidctest":     nil,
	"internal/testkit/redistest":    {"internal/testkit/certtest", "internal/testkit/porttest", "internal/testkit/toolstest"},
	"internal/testkit/pebbletest":   {"internal/testkit", "internal/testkit/certtest", "internal/testkit/logtest", "internal/testkit/toolstest"},
	"internal/testkit/porttest":     nil,
	"internal/testkit/formtest":     nil,
	"internal/testkit/loginfix":     {"internal/testkit", "internal/testkit/clocktest"},
	"internal/testkit/ldaptest":     {"internal/testkit", "internal/testkit/certtest", "internal/testkit/toolstest"},
	"internal/testkit/logintest":    {"internal/auth", "internal/auth/login", "internal/auth/secondfactor", "internal/auth/sessionauth", "internal/catalog", "internal/factors", "internal/peer", "internal/testkit", "internal/testkit/clocktest", "internal/testkit/formtest", "internal/testkit/loginfix", "internal/testkit/logtest", "internal/web"},
	"internal/userstate/storetest":  {"internal/factors", "internal/testkit", "internal/tokens", "internal/userstate"},
	"internal/testkit":              {"internal/testkit/logtest", "internal/testkit/porttest"},
	"internal/testkit/throttletest": {"internal/testkit/clocktest", "internal/throttle"},
	"internal/testkit/toolstest":    nil,
	"internal/testkit/wstest":       {"internal/testkit", "internal/testkit/toolstest"},
}

// imports returns, for every package directory of the module, the module
// packages its non-test Go files import.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	got := map[string][]string{}
	eachSourceFile(t, root, parser.ImportsOnly, func(_ *token.FileSet, rel string, f *ast.File) error {
		pkg := path.Dir(rel)
		if _, ok := got[pkg]; !ok {
			got[pkg] = nil
		}
		for _, im := range f.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return err
			}
			if dep, ok := strings.CutPrefix(p, module); ok && !slices.Contains(got[pkg], dep) {
				got[pkg] = append(got[pkg], dep)
			}
		}
		return nil
	})
	return got
}

// violations lists the edges of got that table does not allow, the
// packages it does not know, and its entries for packages that do not
// exist.
func violations(got, table map[string][]string) []string {
	var out []string
	for pkg, deps := range got {
		ok, known := table[pkg]
		if !known {
			out = append(out, "package "+pkg+" is not in the table of allowed edges: add it with the module packages it may import")
			continue
		}
		for _, dep := range deps {
			if !slices.Contains(ok, dep) {
				out = append(out, pkg+" imports "+dep+", an edge the table does not allow (see ARCHITECTURE.md for the layers)")
			}
		}
	}
	for pkg := range table {
		if _, ok := got[pkg]; !ok {
			out = append(out, "the table names package "+pkg+", which does not exist any more")
		}
	}
	slices.Sort(out)
	return out
}

// TestImportEdges fails on an import the table does not allow, and on a
// table entry for a package that no longer exists (so the table stays the
// true map of the module). It parses the source itself: it needs no tool
// and never skips.
func TestImportEdges(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	got := imports(t, root)
	if len(got) < 20 {
		t.Fatalf("found only %d packages under %s: the walk is broken", len(got), root)
	}
	for _, v := range violations(got, allowed) {
		t.Error(v)
	}
}

// TestViolations runs the check on a tree written for the test, in which
// the core imports the HTTP surface: the edge, the unknown package and the
// stale entry are all reported.
func TestViolations(t *testing.T) {
	root := t.TempDir()
	write := func(path, src string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module github.com/backupweb/backupweb\n")
	write("auth/auth.go", "package auth\nimport _ \""+module+"web\"\n")
	write("auth/auth_test.go", "package auth\nimport _ \""+module+"cmd/backupweb\"\n")
	write("web/web.go", "package web\nimport _ \""+module+"auth\"\n")
	write("extra/extra.go", "package extra\n")
	table := map[string][]string{"auth": nil, "web": {"auth"}, "gone": nil}
	got := violations(imports(t, root), table)
	want := []string{
		"auth imports web, an edge the table does not allow (see ARCHITECTURE.md for the layers)",
		"package extra is not in the table of allowed edges: add it with the module packages it may import",
		"the table names package gone, which does not exist any more",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%q\nwant\n%q", got, want)
	}
}

// TestOnePublicPackage keeps the module's visibility rule: the root
// package (the library face) and the program are all that another module
// can import or install; every other package lives under internal/.
func TestOnePublicPackage(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range imports(t, root) {
		if pkg != "." && pkg != "cmd/backupweb" && !strings.HasPrefix(pkg, "internal/") {
			t.Errorf("package %s is importable by other modules: move it under internal/ (only the root package and cmd/backupweb are public)", pkg)
		}
	}
}
