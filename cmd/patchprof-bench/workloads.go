package main

// A Workload is one benchmark program and how patchprof counts it.
type Workload struct {
	// Name is what -workloads and -skip call it.
	Name string
	// Title is its first column in the table.
	Title string
	// Go is set for a Go program: Dir is then its main package; else
	// Sources are C files. Both are relative to the repository's root.
	Go      bool
	Dir     string
	Sources []string
	// CGo builds a Go program's C with gcc -g -O0 (CGO_CFLAGS), its Go
	// as go build does.
	CGo bool
	// SQLite adds the SQLite amalgamation (sqliteModule) to the sources
	// and its directory to the include path.
	SQLite bool
	// CFlags are added to gcc's -g -O0 for every build; CoverFlags to the
	// --coverage build only.
	CFlags, CoverFlags []string
	// Args are the program's arguments.
	Args []string
	// Mode is what patchprof counts: --funcs, --lines or both.
	Mode []string
	// Handler is set for a server (server_linux.go): the function that
	// answers each request, whose count patchprof attached with -p must
	// find equal to the requests made. A server is measured by the
	// requests per second a bounded load gets from it, not by a run's
	// wall time, and only under patchprof's engines.
	Handler string
	// Start is set for the measure of patchprof's own start: native runs
	// the Go program of Dir (a hello world: the start of any Go
	// program, the baseline), the jump configuration `patchprof
	// --version`, which exits before reading anything. It counts
	// nothing: the other configurations do not apply.
	Start bool
	// Suite is set for a real project's test suite (suites.go), built
	// at the optimisation level Opt: Mode then applies to the whole
	// suite, patchprof following its processes.
	Suite *Suite
	Opt   string
	// Idle is set for the measure of patchprof watch (watch_linux.go):
	// that many idle copies of the program (oncommand.c) are watched, and
	// the watch's CPU and memory measured while they do nothing. Only
	// patchprof runs.
	Idle int
	// Pause is set for the measure of how long an attach stops a process
	// (pause_linux.go): the program runs forever, patchprof attaches
	// with -p under the in-process engine, and the stop it reports is
	// measured. Only patchprof runs.
	Pause bool
	// Generated is set for a C program that genFuncs writes at build
	// time: that many functions, of which only the first genCalled run
	// (issue 28: a start that costs what runs, not what is on disk).
	Generated int
	// GoPkg names a Go package built as the program instead of Dir (the
	// Go compiler, cmd/compile: a big real program, with DWARF, that
	// the bench builds from the toolchain's own sources). It has no
	// cover build.
	GoPkg string
}

// sqliteModule is the Go module whose sqlite3-binding.c and .h are the
// SQLite amalgamation (3.45.1), as integration/sqlite_test.go uses it.
const sqliteModule = "github.com/mattn/go-sqlite3@v1.14.22"

// workloads are the programs the bench runs, in table order.
var workloads = append([]Workload{
	{
		Name: "empty", Title: "an empty C program, `--lines --funcs` (a run's fixed cost)",
		Sources: []string{"cmd/patchprof-bench/testdata/empty.c"}, Mode: []string{"--lines", "--funcs"},
	},
	{
		Name: "version", Title: "`patchprof --version` against a Go hello world (patchprof's own start)",
		Go: true, Dir: "cmd/patchprof-bench/testdata/gohello", Start: true,
	},
	{
		Name: "fib", Title: "recursive fib(30), `--funcs`",
		Sources: []string{"cmd/patchprof-bench/testdata/fib.c"}, Args: []string{"30"},
		Mode: []string{"--funcs"},
	},
	{
		Name: "shellsort", Title: "Shell sort of 20,000 numbers, `--lines`",
		Sources: []string{"cmd/patchprof-bench/testdata/shellsort.c"}, Args: []string{"20000"},
		Mode: []string{"--lines"},
	},
	{
		Name: "sqlite", Title: "SQLite (integration/testdata/sqlite/driver.c), `--lines --funcs`",
		Sources: []string{"integration/testdata/sqlite/driver.c"}, SQLite: true,
		// No mutexes and no dlopen: one thread and one module, as in
		// integration/sqlite_test.go.
		CFlags: []string{"-DSQLITE_THREADSAFE=0", "-DSQLITE_OMIT_LOAD_EXTENSION"},
		Mode:   []string{"--lines", "--funcs"},
	},
	{
		Name: "sqlitefuncs", Title: "SQLite (the same driver), `--funcs` (the cost of --calls, with jump+calls)",
		Sources: []string{"integration/testdata/sqlite/driver.c"}, SQLite: true,
		CFlags: []string{"-DSQLITE_THREADSAFE=0", "-DSQLITE_OMIT_LOAD_EXTENSION"},
		Mode:   []string{"--funcs"},
	},
	{
		Name: "cgosqlite", Title: "SQLite through cgo behind a Go driver (9 MB of C in one file), `--lines --funcs --file sqlite3-binding.c`",
		Go: true, CGo: true, Dir: "cmd/patchprof-bench/testdata/cgosqlite",
		// Only SQLite's C: the C of runtime/cgo counts the threads the
		// Go runtime starts, which differ from run to run.
		Mode: []string{"--lines", "--funcs", "--file", "sqlite3-binding.c"},
	},
	{
		Name: "fib35", Title: "recursive fib(35), `--funcs` (30 million calls: the cost of --calls per call, with jump+calls)",
		Sources: []string{"cmd/patchprof-bench/testdata/fib.c"}, Args: []string{"35"},
		Mode: []string{"--funcs"},
	},
	{
		Name: "fib36", Title: "recursive fib(36), `--lines --funcs` (48 million calls: the cost per hit)",
		Sources: []string{"cmd/patchprof-bench/testdata/fib.c"}, Args: []string{"36"},
		Mode: []string{"--lines", "--funcs"},
	},
	{
		Name: "threads", Title: "4 threads, fib(24) each, `--funcs`",
		Sources: []string{"cmd/patchprof-bench/testdata/threads.c"}, CFlags: []string{"-pthread"},
		CoverFlags: []string{"-fprofile-update=atomic"}, Args: []string{"24"}, Mode: []string{"--funcs"},
	},
	{
		Name: "shellsort1m", Title: "Shell sort of 1,000,000 numbers, `--lines` (the cost per hit)",
		Sources: []string{"cmd/patchprof-bench/testdata/shellsort.c"}, Args: []string{"1000000"},
		Mode: []string{"--lines"},
	},
	{
		Name: "threads30", Title: "4 threads, fib(30) each, `--funcs` (the cost per hit)",
		Sources: []string{"cmd/patchprof-bench/testdata/threads.c"}, CFlags: []string{"-pthread"},
		// gcov's counters shared by threads, updated atomically: what a
		// correct count of a threaded program costs it.
		CoverFlags: []string{"-fprofile-update=atomic"}, Args: []string{"30"}, Mode: []string{"--funcs"},
	},
	{
		Name: "writes", Title: "100,000 write(2)s to /dev/null, each after a counted call, `--funcs`",
		Sources: []string{"cmd/patchprof-bench/testdata/writes.c"}, Args: []string{"100000"},
		Mode: []string{"--funcs"},
	},
	{
		Name: "writeslines", Title: "the same, `--lines --funcs`",
		Sources: []string{"cmd/patchprof-bench/testdata/writes.c"}, Args: []string{"100000"},
		Mode: []string{"--lines", "--funcs"},
	},
	{
		Name: "pingpong", Title: "2 threads passing a byte through pipes 50,000 times, a counted call a pass, `--funcs` (the cost of a context switch)",
		Sources: []string{"cmd/patchprof-bench/testdata/pingpong.c"}, CFlags: []string{"-pthread"},
		CoverFlags: []string{"-fprofile-update=atomic"}, Args: []string{"50000"}, Mode: []string{"--funcs"},
	},
	{
		Name: "gohello", Title: "Go hello world, `--funcs` (a Go program's start)",
		Go: true, Dir: "cmd/patchprof-bench/testdata/gohello", Mode: []string{"--funcs"},
	},
	{
		Name: "goroutines", Title: "Go, 8 goroutines, fib(20) each, `--lines --funcs`",
		Go: true, Dir: "cmd/patchprof-bench/testdata/goroutines", Args: []string{"20"},
		Mode: []string{"--lines", "--funcs"},
	},
	{
		Name: "funcs10", Title: "a C program of 10 functions, each run, `--lines --funcs` (the baseline of funcs100k)",
		Generated: 10, Mode: []string{"--lines", "--funcs"},
	},
	{
		Name: "funcs100k", Title: "a C program of 100,000 functions, 10 of them run, `--lines --funcs`",
		Generated: 100000, Mode: []string{"--lines", "--funcs"},
	},
	{
		Name: "gocompile", Title: "the Go compiler (cmd/compile, 30 MB with DWARF) compiling an empty package, `--funcs`",
		Go: true, GoPkg: "cmd/compile", Mode: []string{"--funcs"},
		// The package's file, written beside the build, is added.
		Args: []string{"-p", "main", "-o", "/dev/null"},
	},
	{
		Name: "cserver", Title: "C server (integration/testdata/cserver.c): accept/read/write, a thread a connection, `--funcs -p`",
		Sources: []string{"integration/testdata/cserver.c"}, CFlags: []string{"-pthread"},
		Mode: []string{"--funcs"}, Handler: "handle_request",
	},
	{
		Name: "goserver", Title: "Go net/http server, `--funcs -p`",
		Go: true, Dir: "cmd/patchprof-bench/testdata/goserver", Mode: []string{"--funcs"}, Handler: "main.handle",
	},
	{
		Name: "sqliteattach", Title: "SQLite's driver made to loop (cmd/patchprof-bench/testdata/sqliteloop.c), `--lines --funcs -p`: how long the attach stops it",
		Sources: []string{"cmd/patchprof-bench/testdata/sqliteloop.c"}, SQLite: true,
		CFlags: []string{"-DSQLITE_THREADSAFE=0", "-DSQLITE_OMIT_LOAD_EXTENSION"},
		Mode:   []string{"--lines", "--funcs"}, Pause: true,
	},
	{
		Name: "watchidle", Title: "`patchprof watch --funcs` of 50 idle processes (integration/testdata/oncommand.c, blocked on stdin)",
		Sources: []string{"integration/testdata/oncommand.c"}, CFlags: []string{"-pthread"}, Idle: 50,
	},
}, suiteWorkloads()...)

// workloadNames lists the workloads' names in table order.
func workloadNames() []string {
	names := make([]string, len(workloads))
	for i, w := range workloads {
		names[i] = w.Name
	}
	return names
}
