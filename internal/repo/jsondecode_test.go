package repo

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// ownJSON are the files allowed to decode with encoding/json (Unmarshal,
// NewDecoder), each with why: every one reads what backupweb itself wrote,
// and an outside party cannot choose its members. encoding/json matches
// member names ignoring letter case and keeps the last of duplicates, so
// everything from outside (an identity provider's answers, ID token
// claims, discovery, key sets, a browser's request body) is read with
// internal/exactjson instead. A file added here needs its reason.
var ownJSON = map[string]string{
	"internal/auth/secondfactor/enrol.go":   "the TOTP enrolment state, sealed with the secret key: read only once its seal opens",
	"internal/auth/secondfactor/pending.go": "the second-factor step's pending state, sealed with the secret key: read only once its seal opens",
	"internal/auth/oauth/flow.go":           "the sign-in in progress, sealed with the secret key: read only once its seal opens",
	"internal/factors/parse.go":             "the factors file, written by backupweb (sealed secrets, hashed codes, passkeys)",
	"internal/passkey/ceremony.go":          "a passkey ceremony kept by backupweb in a session record, whose MAC is checked first",
	"internal/passkey/factors.go":           "a passkey's credential record, written by backupweb when the passkey was registered",
	"internal/redisstore/sessions.go":       "session records backupweb wrote to Redis, whose MAC is checked after decoding",
	"internal/redisstore/userstate.go":      "a user's factors record backupweb wrote to Redis, whose MAC is checked before decoding",
	"internal/redisstore/usertokens.go":     "machine-token records backupweb wrote to Redis, whose MAC is checked before decoding",
	"internal/userstate/userstate.go":       "a passkey's stored credential, written by backupweb when the passkey was registered",
	"internal/session/journal.go":           "the session store's journal, written by backupweb",
	"internal/session/statefile.go":         "the session store's state file, written by backupweb",
	"internal/tokens/file.go":               "the machine tokens file, written by backupweb",
	"internal/attrs/attrs.go":               "a session's attributes inside a session record backupweb wrote, whose MAC is checked after decoding",
}

// oidcDecoders are go-oidc's functions and methods that decode what the
// provider sent with encoding/json: its discovery (oidc.NewProvider), the
// claims of an ID token or of its user-information call (Claims), and
// that call itself (UserInfo). backupweb reads those with exactjson.
var oidcDecoders = []string{"NewProvider", "Claims", "UserInfo"}

// jsonDecoding returns, for each non-test Go file of the module, the
// places that decode with encoding/json or with go-oidc's decoders, as
// "file:line: what".
func jsonDecoding(t *testing.T, root string) map[string][]string {
	t.Helper()
	found := map[string][]string{}
	eachSourceFile(t, root, 0, func(fset *token.FileSet, rel string, f *ast.File) error {
		for _, place := range decodingPlaces(fset, f) {
			found[rel] = append(found[rel], rel+":"+place)
		}
		return nil
	})
	return found
}

// decodingPlaces lists where f decodes with encoding/json (a reference to
// its Unmarshal or NewDecoder, under whatever name the file imports it)
// or, in a file that imports go-oidc, calls one of oidcDecoders.
func decodingPlaces(fset *token.FileSet, f *ast.File) []string {
	jsonName, oidcName := "", ""
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		switch p {
		case "encoding/json":
			jsonName = name
		case "github.com/coreos/go-oidc/v3/oidc":
			oidcName = name
		}
	}
	var out []string
	if jsonName == "." {
		out = append(out, fmt.Sprintf("%d: imports encoding/json with a dot", fset.Position(f.Package).Line))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && jsonName != "" && x.Name == jsonName && (n.Sel.Name == "Unmarshal" || n.Sel.Name == "NewDecoder") {
				out = append(out, fmt.Sprintf("%d: encoding/json.%s", fset.Position(n.Pos()).Line, n.Sel.Name))
			}
		case *ast.CallExpr:
			sel, ok := n.Fun.(*ast.SelectorExpr)
			if !ok || oidcName == "" || !slices.Contains(oidcDecoders, sel.Sel.Name) {
				return true
			}
			// NewProvider is go-oidc's discovery as a function of the
			// package; ProviderConfig's method of that name decodes
			// nothing.
			if x, isIdent := sel.X.(*ast.Ident); sel.Sel.Name != "NewProvider" || isIdent && x.Name == oidcName {
				out = append(out, fmt.Sprintf("%d: go-oidc's %s", fset.Position(n.Pos()).Line, sel.Sel.Name))
			}
		}
		return true
	})
	return out
}

// TestOutsideJSONReadExactly fails when a file not in ownJSON decodes
// with encoding/json or go-oidc's decoders, and when a file in ownJSON no
// longer does (so that the list stays the true one). It parses the source
// itself: it needs no tool and never skips.
func TestOutsideJSONReadExactly(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found at %s: %v", root, err)
	}
	found := jsonDecoding(t, root)
	for file, places := range found {
		if _, ok := ownJSON[file]; !ok {
			for _, p := range places {
				t.Errorf("%s decodes with a decoder that matches names ignoring case and keeps the last of duplicates: read outside input with internal/exactjson, or add the file to ownJSON with why only backupweb writes what it reads", p)
			}
		}
	}
	for file := range ownJSON {
		if len(found[file]) == 0 {
			t.Errorf("ownJSON names %s, which no longer decodes with encoding/json: remove it", file)
		}
	}
	if len(found) < len(ownJSON) {
		t.Fatalf("found %d files that decode JSON, fewer than the %d allowed: the walk is broken", len(found), len(ownJSON))
	}
}

// TestDecodingPlaces runs the search on source written for the test: an
// aliased encoding/json, a decoder made, go-oidc's claims read and its
// discovery, and the uses that are no decoding (Marshal, RawMessage,
// another package's Unmarshal, ProviderConfig.NewProvider) left alone.
func TestDecodingPlaces(t *testing.T) {
	src := `package p

import (
	std "encoding/json"
	"github.com/coreos/go-oidc/v3/oidc"
	json "github.com/go-json-experiment/json"
)

func f(b []byte, idt *oidc.IDToken) {
	var v any
	std.Unmarshal(b, &v)
	_ = std.NewDecoder
	idt.Claims(&v)
	oidc.NewProvider(nil, "")
	(&oidc.ProviderConfig{}).NewProvider(nil)
	std.Marshal(v)
	_ = std.RawMessage(b)
	json.Unmarshal(b, &v)
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := decodingPlaces(fset, f)
	want := []string{"11: encoding/json.Unmarshal", "12: encoding/json.NewDecoder", "13: go-oidc's Claims", "14: go-oidc's NewProvider"}
	if !slices.Equal(got, want) {
		t.Errorf("decodingPlaces = %q, want %q", got, want)
	}
}
