// Command patchprof counts how many times each source line and function of
// an unmodified Linux x86-64 program runs, by patching int3 breakpoints into
// it under ptrace (Matt Bishop's execution monitor), and prints the source
// annotated with the counts, even when the program crashes.
//
// Usage:
//
//	patchprof [flags] [--] PROGRAM [ARGS...]
//	patchprof [flags] -p PID [--duration D]
//	patchprof report [flags] FILE...
//	patchprof merge [--force] -o OUT FILE...
//	patchprof watch (--exe PATH | --pid-file FILE) --save FILE [flags]
//
// The first form starts PROGRAM (looked up in PATH as execve would) and
// counts until it exits; -p attaches to a running process and restores its
// code when it detaches. Lines are counted by default; --funcs counts calls,
// --blocks basic blocks and branches, --time samples CPU time. The report
// (a listing, gcov, gcov JSON, lcov, pprof, Cobertura or HTML) goes to
// stderr or -o; --save keeps the raw profile, which `patchprof report`
// renders again and `patchprof merge` sums. `patchprof watch` attaches to
// every process of a program as it appears (package watch) and sums them. patchprof exits with the
// program's own status, or with env(1)'s 125, 126 and 127 when it failed
// itself, could not run the program or did not find it. See docs/cli.md for
// every flag, or patchprof -h.
//
// The command parses flags, handles its own signals and terminal, and
// writes outputs; package profiler runs the profile and package output
// renders it.
//
// Files:
//
//	main.go: main and Main, the main command's flags, the run with its
//	    interim reports, the program's resolution and ELF check
//	report.go: the report flags and formats, writing the report; the
//	    report and merge subcommands
//	blocks.go: --blocks and --disasm
//	timeflags.go: --time, --sample-rate, --time-fallback; --sort, --heat
//	watch.go: the watch subcommand: its flags, the selector, the aggregate's files
//	listen.go: --listen and --listen-token: the live endpoints (package serve)
//	usage.go: -h grouped by decision, and --version
//	exit.go: exit statuses and the errors a user can fix
//
//	outpath.go: output paths checked before the run; atomic replacement,
//	    and a temporary file when the path cannot take the output
//	source.go: reading source files, regular and bounded in size, with notes
//	progress.go: the progress line of slow steps on a terminal
//	term.go: where the listing goes: a terminal or not, its width, NO_COLOR
//	term_linux.go, term_other.go: the terminal ioctls, and none elsewhere
//
//	signals.go: patchprof's own signals, given their meaning at each stage
//	    of a run (caught from package init by internal/catch)
//	signals_unix.go, signals_other.go: send, a signal to the target
//	sys_unix.go: passOn (no second copy of a terminal's signal), and the
//	    access checks of outputs and programs
//	sys_other.go: the same without Unix, and no set-ID notes
//	setid_unix.go: notes on set-ID bits the kernel ignores under ptrace
package main
