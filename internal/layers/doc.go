// Package layers holds the test that keeps the import graph of the module
// in the direction ARCHITECTURE.md draws: every import of one of the
// module's packages by another must be listed in the table of allowed
// edges in layers_test.go. It has no code of its own.
package layers
