// Command patchprof-bench measures patchprof's engines against the
// alternatives, in one run on one machine: per workload, the native program, the floor (the
// program under cmd/patchprof-bench/floor, a Go ptrace tracer that starts it
// and lets it run to its exit, doing nothing else: the part of patchprof's
// cost that no profiling work can go below), a `gcc --coverage` build
// (`go build -cover` for Go), callgrind, uftrace where installed (on a `-pg`
// build), and patchprof under each engine (classic, xol, jump), and the
// in-process engine with --time (jump+time: what sampling costs beside
// counting), with --calls (jump+calls: what the call graph costs, on
// fib35 and sqlitefuncs, both --funcs, as issue 29 measures it) and with a warm analysis cache (jump+cache: a second run on
// an unchanged program; its cache is filled by an untimed run first, and
// every other patchprof configuration runs with an empty one, a first
// run; no run reads or fills the user's ~/.cache). The configurations run round-robin, N times each, so that drift
// of the machine spreads over all of them; the table gives each one's median
// wall time, its ratios to the native and the floor medians and its cost
// per hit over native.
//
// Run it from the repository (it builds ./cmd/patchprof,
// ./cmd/patchprof-bench/floor and the targets in cmd/patchprof-bench/testdata
// into a temporary directory):
//
//	go run ./cmd/patchprof-bench -n 5
//	go run ./cmd/patchprof-bench -workloads fib,shellsort -configs native,xol,jump
//
// The other flags: -skip WORKLOAD:CONFIG,... leaves pairs out, -timeout D
// bounds one run (a configuration that exceeds it is not run again),
// -patchprof-flags adds flags to every patchprof run, -keep keeps the
// temporary directory with its builds, reports and saved profiles,
// -server-requests and -server-conns size the servers' load,
// -watch-window D the window of the watch workload.
//
// A hit is one event the profile counts: the sum of the `sites` counts of
// the xol engine's saved profile (every counted function entry and block
// start executed: one trap each under the trap engines). The jump engine
// derives some block counts instead of counting them, so its own sites are
// not the measure; every configuration of a workload is divided by the same
// number. "ns/hit" is (median - native median) / hits; the floor has none,
// as it counts nothing. "peak RSS" is the median of the runs' wait4
// ru_maxrss: for patchprof the larger of patchprof and its target. Go
// starts each command from a vfork of the bench, whose own memory the
// kernel counts in that peak, so a peak not above the bench's own (its
// VmHWM, some 40 MiB) is shown as "-": it says nothing of the command.
//
// The command also checks what it measures: every patchprof and floor run
// must exit 0 and print what the workload's first run printed (the native
// program's, when native is among the configurations), and the line and
// function counts of every engine's saved profile must equal those of the
// first profile of the workload. Any difference is printed in capitals and
// makes the command exit 1.
//
// The servers (cserver, goserver) are measured otherwise: patchprof
// attaches to a running server (-p) under a bounded load, the daemon use
// of issue 27. Each round starts the server, warms it up, then puts the
// same load on it (-server-requests requests over -server-conns
// keep-alive connections, made by the bench itself) three times: before
// patchprof attaches, attached (the load starts once patchprof says it
// attached, and SIGINT detaches it after the last answer), and after the
// detach. The servers' table gives each phase's median requests per second
// and the median of the rounds' changes against the phase before (the
// phases of a round run seconds apart, the rounds minutes apart on a
// machine whose load drifts). Each round checks that the
// saved profile counted the handler exactly once per request made while
// attached, that the detach left no tracer, the executable mappings as
// they were and the code as its files have it (/proc/PID/mem), and that
// the server answered every request and, at its end, counted them all.
// Servers run under the engines among -configs only:
//
//	go run ./cmd/patchprof-bench -workloads cserver,goserver -configs jump
//
// The version workload measures patchprof's own start, the part of every
// run's fixed cost that comes before reading the program: `patchprof
// --version` (the jump configuration), against a Go hello world (native),
// the start of any Go program; its other configurations do not apply.
//
// The test suites (zlib, bzip2, cjson, tinyxml2, jimtcl, each also at
// -O2 as NAME-O2) are real projects' own tests, fetched with `apt-get
// source` at the versions integration/projects_test.go pins (deb-src
// needed, as .ci/run sets up), built plain and with --coverage at -O0 or
// -O2, and run whole as one shell script: patchprof follows its
// processes. Their summary table gives the ratios to native and the traps
// among the hits of the first jump run, and the checks list the reasons
// the sites that trapped kept a breakpoint:
//
//	go run ./cmd/patchprof-bench -n 3 -configs native,gcov,jump -workloads zlib,zlib-O2,jimtcl
//
// The watchidle workload measures patchprof watch, the daemon of issue
// 30: each round starts 50 idle copies of integration/testdata/oncommand.c
// (blocked reading stdin), watches them (--exe polling /proc with
// --no-events, --exe woken by the kernel's process events where it may
// join them, then --cgroup in a cgroup v2 directory the bench makes,
// where it can), waits until all are
// attached, and measures over -watch-window D (20 s) the CPU the watch
// and its children use (utime+stime, /proc/PID/stat) and their resident
// memory; then each copy calls work() 100 times and the saved aggregate
// must count exactly 5,000. The baseline is the same processes unwatched,
// which use no CPU at all:
//
//	go run ./cmd/patchprof-bench -n 3 -workloads watchidle
//
// The sqliteattach workload measures how long an attach stops a process
// (issue 28: at most 10 ms per 10,000 sites planted): SQLite's driver
// made to loop runs on its own, patchprof attaches with -p under the
// in-process engine, one iteration runs attached, patchprof detaches and
// the program must run on; the stop is the engine note of the saved
// profile, from the first thread seized to the last let go:
//
//	go run ./cmd/patchprof-bench -n 5 -workloads sqliteattach
//
// It is not a test: `go test ./cmd/patchprof-bench/` runs only the unit
// tests of its pure parts (medians, the tables, the comparison of
// profiles, the load generator against a test server, /proc/PID/maps).
//
// Files:
//
//	main.go: main: the flags, then run
//	options.go: Options, the configurations and the flags' parsing
//	workloads.go: Workload and the workloads, in table order
//	generate.go: genFuncs, the C program of n functions of which 10 run
//	build_linux.go: Target: building patchprof, the floor and each
//	    workload's plain, coverage and -pg programs
//	run_linux.go: run: the round-robin of configurations, one run's
//	    command line, its output checked against the first run's
//	run_other.go: run elsewhere, which says the benchmark needs Linux
//	report_linux.go: the table and the checks, and the exit status
//	table.go: Measure and Row: medians, ratios, ns/hit, the table's text
//	server_linux.go: a server's rounds: the load before, attached and
//	    after, the attach and detach, the checks of counts and code
//	load.go: Load, the bounded load generator: keep-alive HTTP/1.1
//	    connections making a fixed number of requests
//	servertable.go: ServerMeasure and ServerRow: the servers' table
//	maps.go: Mapping, the lines of /proc/PID/maps
//	proc_linux.go: a process's code mappings, tracer and code read
//	    through /proc/PID/mem against its files
//	compare.go: Counts: a saved profile's line and function counts, keyed
//	    to compare across engines, and the sites hit
//	suites.go: Suite and the test suites, their traps and summary table
//	suites_linux.go: a suite's source fetched, built and run
//	check.go: countChecker, every engine's counts against the first profile
//	watch_linux.go: the watch of idle processes: its rounds, the CPU and
//	    memory of the watch and its children, the exact count after, its
//	    table
//	pause_linux.go: how long an attach stops a looping program: its
//	    rounds, the stop read from the saved profile, its table
package main
