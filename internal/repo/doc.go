// Package repo holds the tests of the repository as a whole; it has no
// code of its own. doclinks_test.go keeps the documentation's links true:
// every relative link in README.md, ARCHITECTURE.md and docs/ names a file
// that exists and, when it has a #fragment, a heading of that file.
// layers_test.go keeps the import graph in the direction ARCHITECTURE.md
// draws: every import of one of the module's packages by another is listed
// in its table of allowed edges, and every package but the root and
// cmd/backupweb lives under internal/.
package repo
