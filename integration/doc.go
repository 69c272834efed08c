// Package integration holds the end-to-end tests of patchprof: they build the
// real CLI once, compile small C and Go target programs from testdata/ at test
// time, run them under patchprof and check the counts it reports against
// numbers known by construction, against the programs' own counters and
// against gcov.
//
// The package has no code outside its tests. It does not import patchprof's
// packages: the saved profile is decoded with the test's own structs, so the
// tests hold patchprof to its command-line contract (docs/cli.md) and nothing
// else.
//
// The tests need gcc (with gcov) and permission to ptrace; without gcc they
// skip and say so. Run them with
//
//	go test ./integration/
package integration
