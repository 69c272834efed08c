// Package integration holds the end-to-end tests of patchprof: they build the
// real CLI once, compile small C, C++ and Go target programs from testdata/ at
// test time, run them under patchprof and check the counts it reports against
// numbers known by construction, against the programs' own counters and
// against gcov. testdata/shapes is a corpus of control-flow shapes (loops left
// by break, return, goto or exit, multi-line statements, longjmp, deep
// recursion, C++ constructors, templates, lambdas, exceptions, static locals)
// on which TestShapesGcov requires every line count to equal gcov's.
//
// The package has no code outside its tests. It does not import patchprof's
// packages: the saved profile is decoded with the test's own structs, so the
// tests hold patchprof to its command-line contract (docs/cli.md) and nothing
// else. One test checks the source tree instead: TestDocMap requires every
// package's doc.go to name each of its non-test files, as this one does.
//
// The tests need gcc and g++ (with gcov) and permission to ptrace; without a
// compiler they skip and say so. Run them with
//
//	go test ./integration/
//
// Files (the tests, *_test.go, are split by feature; helpers_test.go holds
// what they share: building patchprof and the targets, running them, the
// gcov oracle):
//
//	doc.go: this comment, the package's only non-test file
package integration
