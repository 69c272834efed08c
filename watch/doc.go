// Package watch finds the processes of a program on a host and profiles
// each one as it appears, for patchprof's daemon mode (patchprof watch): a
// Selector says which running processes are wanted (every process whose
// executable is a given file, by device and inode; every process of a
// cgroup v2 subtree; the PID in a file), a
// Watcher polls it, starts one attached patchprof per process found and
// lets it go when the process exits, Aggregate sums the saved
// profiles of every process of one build, past and present, and a
// Handler serves them over HTTP.
//
// Why one patchprof process per target: the monitor waits for its tracees
// with wait4(-1, __WALL) from its tracer thread, and wait4 without
// __WNOTHREAD also reaps the events of tracees of the other threads of
// the same process (wait(2), "__WNOTHREAD"); a tracee's events so taken
// cannot be acted on by the thread that took them (ptrace(2): "the tracer
// is a thread"). Two monitor.Run calls in one process would therefore
// steal each other's stops. One child per target keeps every monitor alone
// in its process, as -p runs it, and a child that fails harms no other
// target.
//
// The package owns discovery, supervision and aggregation; it neither
// plants nor counts (the children do) and never touches a target itself,
// beyond reading /proc.
//
// Files:
//
//	doc.go: this overview
//	proc.go: Proc, Selector and the /proc readers' shared parts
//	proc_linux.go, proc_other.go: scanning /proc (Linux only)
//	cgroup.go: Cgroup, the processes of a cgroup v2 subtree
//	events_linux.go: the kernel's process events connector, which wakes
//	    the watch when a process forks, execs or exits (CAP_NET_ADMIN)
//	aggregate.go: the sum of the processes' profiles, per build
//	watcher.go: Watcher, the poll loop and the children
//	child.go: one child patchprof, what its stderr says, refusals' reasons
//	http.go: the endpoints of --listen: /metrics, /debug/pprof/counts, /processes
package watch
