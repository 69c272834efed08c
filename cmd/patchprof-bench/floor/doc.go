// Command floor is the floor of any tool of patchprof's shape: a Go program
// that starts its target as a traced child and lets it run to its exit,
// doing no profiling at all. The bench runs every workload under it (the
// floor configuration): its ratio to native is the part of patchprof's
// whole-run cost that comes from being a Go program that forks and traces
// its target (the Go runtime's start, the fork and exec, a tracer's
// wait loop), which no profiling work can go below.
//
// Usage:
//
//	floor PROGRAM [ARG...]
//
// PROGRAM is a path, as execve(2) takes it: there is no $PATH search. The
// target inherits the environment and the standard input, output and
// error. floor exits with the target's status, 128+N when signal N killed
// it, and 125 when it failed itself, as patchprof does.
//
// It is the lower bound, so it does no more than a tracer must: the exec
// stop, PTRACE_O_EXITKILL, and a PTRACE_CONT for every stop, passing the
// stop's signal on. It follows no clone, fork or exec (no
// PTRACE_O_TRACECLONE): a Go target's other threads run untraced, which
// only lowers the floor.
//
// Files:
//
//	floor_linux.go: main, the traced start and the wait loop
//	floor_other.go: main elsewhere, which says the floor needs Linux
package main
