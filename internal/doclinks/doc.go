// Package doclinks holds the test that keeps the documentation's links
// true: every relative link in README.md, ARCHITECTURE.md and docs/ names
// a file that exists and, when it has a #fragment, a heading of that file.
// It has no code of its own.
package doclinks
