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
	// SQLite adds the SQLite amalgamation (sqliteModule) to the sources
	// and its directory to the include path.
	SQLite bool
	// CFlags are added to gcc's -g -O0 for every build.
	CFlags []string
	// Args are the program's arguments.
	Args []string
	// Mode is what patchprof counts: --funcs, --lines or both.
	Mode []string
}

// sqliteModule is the Go module whose sqlite3-binding.c and .h are the
// SQLite amalgamation (3.45.1), as integration/sqlite_test.go uses it.
const sqliteModule = "github.com/mattn/go-sqlite3@v1.14.22"

// workloads are the programs the bench runs, in table order.
var workloads = []Workload{
	{
		Name: "empty", Title: "an empty C program, `--lines --funcs` (a run's fixed cost)",
		Sources: []string{"cmd/patchprof-bench/testdata/empty.c"}, Mode: []string{"--lines", "--funcs"},
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
		Name: "fib36", Title: "recursive fib(36), `--lines --funcs` (48 million calls: the cost per hit)",
		Sources: []string{"cmd/patchprof-bench/testdata/fib.c"}, Args: []string{"36"},
		Mode: []string{"--lines", "--funcs"},
	},
	{
		Name: "threads", Title: "4 threads, fib(24) each, `--funcs`",
		Sources: []string{"cmd/patchprof-bench/testdata/threads.c"}, CFlags: []string{"-pthread"},
		Args: []string{"24"}, Mode: []string{"--funcs"},
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
		Name: "gohello", Title: "Go hello world, `--funcs` (a Go program's start)",
		Go: true, Dir: "cmd/patchprof-bench/testdata/gohello", Mode: []string{"--funcs"},
	},
	{
		Name: "goroutines", Title: "Go, 8 goroutines, fib(20) each, `--lines --funcs`",
		Go: true, Dir: "cmd/patchprof-bench/testdata/goroutines", Args: []string{"20"},
		Mode: []string{"--lines", "--funcs"},
	},
}

// workloadNames lists the workloads' names in table order.
func workloadNames() []string {
	names := make([]string, len(workloads))
	for i, w := range workloads {
		names[i] = w.Name
	}
	return names
}
