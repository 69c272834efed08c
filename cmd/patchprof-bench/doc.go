// Command bench measures patchprof's engines against the alternatives, in
// one run on one machine (issue 13, "Benchmarks"): per workload, the native
// program, the floor (the program under cmd/patchprof-bench/floor, a Go ptrace tracer
// that starts it and lets it run to its exit, doing nothing else: the part
// of patchprof's cost that no profiling work can go below), a
// `gcc --coverage` build (`go build -cover` for Go), callgrind, uftrace
// where installed (on a `-pg` build), and patchprof under each engine
// (classic, xol, jump), and the in-process engine with --time (jump+time:
// what sampling costs beside counting). The configurations run round-robin,
// N times each, so that drift of the machine spreads over all of them; the
// table gives each one's median wall time, its ratio to the native median
// and its cost per hit over native.
//
// Run it from the repository (it builds ./cmd/patchprof, ./cmd/patchprof-bench/floor and
// the targets in cmd/patchprof-bench/testdata into a temporary directory):
//
//	go run ./cmd/patchprof-bench -n 5
//	go run ./cmd/patchprof-bench -workloads fib,shellsort -configs native,xol,jump
//
// A hit is one event the profile counts: the sum of the `sites` counts of
// the xol engine's saved profile (every counted function entry and block
// start executed: one trap each under the trap engines). The jump engine
// derives some block counts instead of counting them, so its own sites are
// not the measure; every configuration of a workload is divided by the same
// number. "ns/hit" is (median - native median) / hits; the floor has none,
// as it counts nothing.
//
// The command also checks what it measures: every patchprof and floor run
// must exit 0 and print what the native program printed, and the line and
// function counts of every engine's saved profile must equal those of the
// first profile of the workload. Any difference is printed in capitals and
// makes the command exit 1.
//
// bench is not a test: `go test ./cmd/patchprof-bench/` runs only the unit tests of its
// pure parts (medians, the table, the comparison of profiles).
package main
