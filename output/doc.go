// Package output renders a *profile.Profile as the report patchprof prints:
// a header saying how the target ended, the annotated source listing, the
// function table and closing notes; and as the files other tools read:
// lcov tracefiles (WriteLCOV), gcov text (WriteGcov) and JSON
// (WriteGcovJSON), pprof protobufs (WritePprof), Cobertura XML
// (WriteCobertura), a self-contained HTML page (WriteHTML) and callgrind
// files (WriteCallgrind); and an
// annotated disassembly the caller decodes (WriteDisasm, --disasm). It owns
// the layout, which code is shown (Scope: start-up functions and system
// sources left out) and the search for source files (Options.SourceDirs,
// Options.Subst); it does not own the counts (package profile), how they
// were gathered (package monitor) or the decoding of machine code. The
// package is pure Go and builds on any OS.
//
// # Report
//
// Sections are separated by one blank line:
//
//	patchprof: ./sort killed by SIGSEGV (fault address 0x0) in shell at sort.c:14
//
//	FILE    LINE    COUNT      SOURCE
//	sort.c     1         :     #define MAX 100
//	sort.c     3        1:     main()
//	sort.c    13        6:         for (i = gap; i < n; i++)
//	sort.c    14      503: >>>         v[j] = 0; /* boom */  <<< SIGSEGV
//	sort.c    20    #####:     unused();
//
//	FUNCTION CALLS
//	COUNT  FUNCTION  LOCATION
//	    1  main      sort.c:3
//	    1  shell     sort.c:11
//	    0  unused    sort.c:19
//
//	note: 1 line-table row dropped: not an instruction start
//
// The header is `patchprof: PROG exited with code N`, or `patchprof: PROG
// killed by SIG` followed, when known, by ` (fault address A)`, ` in FUNC`
// and ` at FILE:LINE`. PROG is argv[0] as the user typed it. With
// Options.Pinned the line ends with ` (run on one CPU: --pin)`.
//
// # Listing
//
// One row per source line: `FILE  LINE  COUNT: MMM SOURCE`.
//   - FILE is the path relative to Options.Cwd when the file lies under it,
//     else the path as recorded; the column is as wide as the longest name.
//   - LINE is right-aligned, at least 4 wide.
//   - COUNT is empty for a line without code, "#####" for a line with code
//     that never ran, else the count, right-aligned in at least 7 columns.
//     In the histogram styles it is a bar followed by the count in
//     parentheses, `****** (6)`, left-aligned; Histogram draws one '*' per
//     entry while the hottest line fits the bar width, else scales the bars
//     to the hottest line (which fills the bar): linearly when the lowest
//     nonzero count is at least 1/width of the highest, else on a log scale
//     (width*ln(count)/ln(max) stars, at least one), and a note says which
//     scale and what a star is worth; Scaled draws
//     count/max of the whole listing times the bar width, rounded, with at
//     least one '*' for any nonzero count. The bar width is 3/10 of
//     Options.Width (30 for the default 100), at least 10.
//   - MMM is the crash marker column: ">>>" on the line where the fatal
//     signal struck and "   " elsewhere, followed by one space. It appears
//     only when the listing contains the crash line, which also ends with
//     `  <<< SIGNAME`.
//   - SOURCE is the text of the line with tabs expanded to 8-column stops
//     (so the columns before it stay aligned) and a trailing CR removed.
//
// A column header row (`FILE LINE COUNT SOURCE`) is printed once. Files come
// in path order, lines in number order: every line of the source file, plus
// rows with empty SOURCE for counted lines past the end of the file (the
// source has changed since the build; a note says so). When the source
// cannot be found, only the counted lines are listed, with empty SOURCE,
// and a note tells how to point patchprof at it. No output line ends in a
// space. What any report writes is thus bounded by the sources and the
// profile, whatever line numbers the profile holds.
//
// Control characters in file, function and module names, notes and the
// program's name (which come from a profile or DWARF) are written as Go
// escapes ("\n", "\x1b") in the listing, lcov and gcov outputs, so a name
// can neither split a row or a record nor send escape sequences to the
// terminal.
//
// # Finding sources
//
// For a file recorded as PATH, Write reads, in order and taking the first
// that succeeds: PATH after the first matching Options.Subst rewrite (a
// rule matches when From is PATH or a directory prefix of it); then, for
// each Options.SourceDirs entry DIR in order, DIR joined with that path
// stripped of its leading "/", then DIR joined with its base name. The
// longer join comes first because it cannot pick up a same-named file from
// another directory.
//
// # Function table
//
// Title `FUNCTION CALLS`, a column header, then one row per function:
// COUNT right-aligned, the name, and FILE:LINE of its entry (shortened like
// the listing) when known. Rows are sorted by count, highest first, then by
// name and address (by sampled time first when Options.Sort says so).
// Functions never called show 0.
//
// Names are shown as their language writes them (DisplayName): C++ and
// Rust symbols demangled, Go and C names as they are.
//
// # Modules
//
// A profile with Modules (shared libraries, exec'd programs) gets one
// section per module that counted anything, in Profile.ModulePaths order
// (the executable first): a title `MODULE PATH (KIND)` (the path shortened
// like file names, KIND "executable" or "library"), then that module's
// listing and function table. A profile without modules has no such
// titles and renders as above. The file-based exports (lcov, gcov, gcov
// JSON, Cobertura, HTML) have no notion of modules: they sum a source
// file's counts over every module that contains it, by file and line.
// pprof keeps the modules apart, one mapping each.
//
// # Colour
//
// With Options.Color, ANSI SGR sequences colour the report: titles and
// column headers bold; each COUNT cell by heat, the logarithm of the count
// against the highest count of the profile (of the table, for the function
// table) on a scale of blue, cyan, green, yellow and bold red; "#####" (and
// a 0 call count) bold white on red; the crash marker and signal bold
// magenta. Padding stays outside the sequences, so columns line up.
//
// # Folding
//
// With Options.Fold, a run of more than 6 consecutive lines of one file
// that did not run (no code, or a count of 0; never the crash line) keeps
// its first and last 2 lines and shows the rest as one row that says what
// they are: `FILE  ...  : ... N lines not executed ...` when all have code
// that never ran, `... N lines without code ...` when none has code (a
// comment block), else `... N lines: K not executed, M without code ...`.
//
// # Hottest lines
//
// With Options.Top = N > 0, the listing is replaced by `HOTTEST LINES (K
// of M lines with code)` and the K <= N lines with the highest nonzero
// counts (ties in file and line order), in the listing's columns; the
// function table keeps its N most called functions and says
// `FUNCTION CALLS (N of M functions)` when it cut any.
//
// # Instances
//
// The instances of a C++ template (profile.Instance: out-of-line functions
// whose entries share a line of one file, max<int> and max<double>) share
// their lines, and the listing shows the sum there, as gcov does; a note
// says how many instances it sums. With Options.Instances, after the row
// of the group's last line, each instance (by entry address, highest
// first: gcov's order for g++ -O0) follows: a row whose SOURCE is
// "------------------", one with its demangled name and ':', then a row
// for each line from its entry to its end with its own count and
// branches (those then leave the summed rows); a last rule closes the
// group. The title rows keep the FILE column and have no LINE or COUNT.
// Instances are shown where the source was found. WriteGcov and
// WriteGcovJSON always write them apart, as gcov does.
//
// # Call graph
//
// A profile with arcs (--calls) ends each call site's row with its calls,
// in address order, `  [call fib 88, indirect call 7]`, and gets a `CALL
// GRAPH` section after the function tables (of every module together):
// each called or calling function, in the function table's order, is a
// bold row `COUNT  NAME  FILE:LINE` between its callers (above) and its
// callees (below), each indented and summed by function, line and kind,
// with its site and how it calls (through the PLT, a tail call, through a
// pointer); the calls no counted site accounts for come from
// UnknownCallers, an indirect site's go to IndirectCallee. Functions are
// separated by a row of equals signs; --top keeps the first N.
//
// # Notes
//
// The profile's own notes, then the notes about sources (not found, or
// shorter than the profile expects) in file order, each as `note: TEXT`.
//
// # Files
//
//	report.go: Write: the report's sections, the listing, the hottest
//	    lines and the notes
//	functable.go: the function table
//	options.go: Options, Style and Subst, and their parsers
//	header.go: the header line, and PinnedNote
//	bars.go: the histogram and scaled COUNT cells
//	color.go: the heat colours (ANSI SGR)
//	time.go: Key, the sampled-time columns, FormatNanos
//	branches.go: branch outcomes and block summaries (--blocks), shared by
//	    the listing and the exports
//	source.go: finding and reading sources; tab expansion
//	scope.go: Scope, StartupFuncs, SystemDirs, GoRoots: what is shown
//	names.go: DisplayName, demangled C++ and Rust names
//	escape.go: control characters in names written as Go escapes
//	disasm.go: DisasmFunc and WriteDisasm
//	instances.go: a template's instances grouped as gcov groups them,
//	    their rows in the listing (--instances) and their calls and
//	    branches
//
//	lcov.go: WriteLCOV, and the per-file view every file-based export uses
//	gcov.go: WriteGcov, one .gcov file per source
//	gcovjson.go: WriteGcovJSON, gcov's JSON intermediate format
//	cobertura.go: WriteCobertura, Cobertura XML
//	html.go: WriteHTML, one self-contained page
//	pprof.go: WritePprof, pprof protobufs, one mapping per module
//	pprofarcs.go: pprof's calls samples as caller and callee stacks (--calls)
//	pprofstacks.go: pprof's cpu samples as the sampled call chains (--time)
//	callgraph.go: the call graph section and each call site's calls
//	    (--calls), UnknownCallers, IndirectCallee
//	callgrind.go: WriteCallgrind, callgrind.out files
package output
