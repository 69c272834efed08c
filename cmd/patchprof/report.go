package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/patchprof/patchprof/output"
	"github.com/patchprof/patchprof/profile"
)

type listFlag []string

func (l *listFlag) String() string     { return fmt.Sprint([]string(*l)) }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// formats are the report formats --format accepts, in the order the
// messages list them.
var formats = []string{"listing", "gcov", "gcov-json", "lcov", "pprof", "cobertura", "html", "callgrind"}

// binaryFormats are the formats that are never written to a terminal:
// they need -o.
var binaryFormats = map[string]bool{"pprof": true, "gcov-json": true}

type reportFlags struct {
	out        string
	print      string
	format     string
	color      string
	fold       string
	top        int
	sourceDirs listFlag
	substs     listFlag
	wd         string       // the working directory, for the exports that record it
	src        *sourceFiles // reads the sources (options sets it)
	// toStdout sends the listing to stdout when -o is not given: so
	// `patchprof report` does, as a report command should. A live run
	// keeps it on stderr, off the target's stdout.
	toStdout bool
	force    bool // report --force: merge profiles of different executables
	// verbose: -v, the engine's notes in the listing too.
	verbose bool
	// instances: --instances, each template instance apart in the listing.
	instances bool
	// scope is what the listing and exports show (--all-funcs,
	// --all-files); the saved profile keeps everything.
	scope output.Scope
	view  viewFlags // --sort, --heat
}

func (r *reportFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.out, "o", "", "write the report to `PATH` (default: stderr during a run, stdout from patchprof report): - is stdout; a directory for --format gcov")
	fs.StringVar(&r.print, "print", "counts", "how the listing shows counts, `FORMAT` is counts, histogram (a bar per line) or scaled (a percentage of the hottest line)")
	fs.StringVar(&r.format, "format", "listing", "report `FORMAT`: listing, gcov (.gcov files), gcov-json (.gcov.json.gz), lcov (tracefile), pprof (protobuf), cobertura (XML), html (one page), callgrind (callgrind.out, with --calls)")
	fs.StringVar(&r.color, "color", "auto", "heat colours in the listing: `WHEN` is auto (on a terminal, unless NO_COLOR is set), always or never")
	fs.StringVar(&r.fold, "fold", "auto", "fold runs of more than 6 lines that did not run, keeping 2 lines each side: `WHEN` is auto (on a terminal), always or never")
	fs.BoolVar(&r.instances, "instances", false, "in the listing, also show each instance of a C++ template apart under the lines they share (summed there), as gcov does; the gcov exports always do")
	fs.IntVar(&r.top, "top", 0, "list only the `N` hottest lines and most called functions")
	fs.Var(&r.sourceDirs, "source-dir", "also look for sources in `DIR` (repeatable)")
	fs.Var(&r.substs, "subst-path", "rewrite source path prefix `FROM=TO` (repeatable)")
	fs.BoolVar(&r.scope.AllFuncs, "all-funcs", false, "also show the C start-up functions without source lines (_start, _init, frame_dummy, ...) and the library functions without source lines that never ran (a static program's C library), left out of the listing and exports by default")
	r.view.register(fs)
	fs.BoolVar(&r.verbose, "v", false, "also list the engine's notes (sites patched, kept as breakpoints and why, traps), which --save always records")
	fs.BoolVar(&r.scope.AllFiles, "all-files", false, "also show the sources in system directories (/usr/include, the C++ and compiler headers, the Go root), left out of the listing and exports by default")
}

// goRootFree returns dirs without the Go roots: with --std, the Go
// runtime and standard library are what the user asked to see.
func goRootFree(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if !slices.Contains(output.GoRoots, d) {
			out = append(out, d)
		}
	}
	return out
}

func (r *reportFlags) options() (output.Options, error) {
	if !slices.Contains(formats, r.format) {
		return output.Options{}, failed("--format %q: use %s", r.format, strings.Join(formats, ", "))
	}
	for _, f := range []struct{ name, value string }{{"--color", r.color}, {"--fold", r.fold}} {
		if f.value != "auto" && f.value != "always" && f.value != "never" {
			return output.Options{}, failed("%s %q: use auto, always or never", f.name, f.value)
		}
	}
	if r.top < 0 {
		return output.Options{}, failed("--top %d: give a positive number of lines", r.top)
	}
	style, err := output.ParseStyle(r.print)
	if err != nil {
		return output.Options{}, failed("--print %q: use counts, histogram or scaled", r.print)
	}
	r.src = newSourceFiles()
	opt := output.Options{Style: style, SourceDirs: r.sourceDirs, Top: r.top, ReadFile: r.src.ReadFile, EngineNotes: r.verbose, Instances: r.instances}
	if err := r.view.apply(&opt); err != nil {
		return opt, err
	}
	for _, s := range r.substs {
		sub, err := output.ParseSubst(s)
		if err != nil {
			return opt, failed("--subst-path %q: write it as FROM=TO", s)
		}
		opt.Subst = append(opt.Subst, sub)
	}
	if wd, err := os.Getwd(); err == nil {
		r.wd = wd
		// Names relative to / would print as tmp/x.c, which reads as a
		// relative path: from the root, the listing shows them absolute.
		if wd != "/" {
			opt.Cwd = wd
		}
	}
	// One finder of sources for the line model and every report of the
	// run: each file is found and read once.
	opt.Sources = output.NewSources(opt)
	return opt, nil
}

// write renders p in the chosen format to -o PATH; without -o, the
// listing to stderr in a live run and to stdout from `patchprof report`,
// text exports to stdout. "-o -" is stdout. The report is rendered completely before a
// byte is written, so a write that fails (a full disk) loses nothing: the
// report goes to a temporary file instead (see deliver).
func (r *reportFlags) write(p *profile.Profile, opt output.Options, stderr io.Writer) error {
	p = r.scope.Apply(p)
	switch {
	case r.format == "gcov":
		return r.writeGcov(p, opt, stderr)
	case binaryFormats[r.format] && r.out == "":
		return failed("--format %s writes a compressed file: give -o FILE", r.format)
	}
	path := r.out
	if path == "" {
		path = "/dev/stderr"
		if r.format != "listing" || r.toStdout {
			path = "-"
		}
	}
	sink, closeSink, err := openSink(path, stderr)
	if err != nil {
		return err
	}
	defer closeSink()
	var buf chunkBuffer
	t := terminalOf(sink)
	opt.Color = r.color == "always" || (r.color == "auto" && t.isTerminal && !noColor())
	opt.Fold = r.fold == "always" || (r.fold == "auto" && t.isTerminal)
	if opt.Width == 0 {
		opt.Width = t.width
	}
	// The notes of the sources refused so far go with the report; a source
	// first refused while rendering means one more rendering, with its
	// note (the sources read are cached).
	for {
		notes := r.notes()
		buf.Reset()
		if err := r.render(&buf, withNotes(p, notes), opt); err != nil {
			return err
		}
		if len(r.notes()) == len(notes) {
			break
		}
	}
	if sink != nil {
		if _, err := buf.WriteTo(sink); err != nil {
			return setAside("the report", path, cause(err), "patchprof-report-*"+reportExt[r.format], buf.writeTo)
		}
		return nil
	}
	return deliver("the report", path, buf.writeTo, stderr, "patchprof-report-*"+reportExt[r.format])
}

// onStderr reports whether a live run's report goes to stderr: the
// listing without -o, or -o naming stderr.
func (r *reportFlags) onStderr() bool {
	if r.out == "" {
		return r.format == "listing" && !r.toStdout
	}
	return slices.Contains([]string{"/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"}, r.out)
}

// checkOutput checks -o before anything runs (see checkOutput): a
// directory for --format gcov, else a file.
func (r *reportFlags) checkOutput() error {
	if r.format == "gcov" {
		return checkOutput("-o", r.out, outDir)
	}
	return checkOutput("-o", r.out, outReplace)
}

// notes are the notes of the sources refused so far.
func (r *reportFlags) notes() []string {
	if r.src == nil {
		return nil
	}
	return r.src.notes()
}

// render writes p in the chosen format (not gcov) to w.
func (r *reportFlags) render(w io.Writer, p *profile.Profile, opt output.Options) error {
	switch r.format {
	case "lcov":
		return output.WriteLCOV(w, p)
	case "pprof":
		return output.WritePprof(w, p)
	case "gcov-json":
		return output.WriteGcovJSON(w, p, output.GcovJSONOptions{Cwd: r.wd})
	case "cobertura":
		return output.WriteCobertura(w, p, output.CoberturaOptions{Root: r.wd, Timestamp: time.Now().Unix()})
	case "html":
		return output.WriteHTML(w, p, opt)
	case "callgrind":
		return output.WriteCallgrind(w, p)
	}
	return output.Write(w, p, opt)
}

// reportExt is the file name extension of a report set aside in a
// temporary file, by format.
var reportExt = map[string]string{
	"listing": ".txt", "gcov-json": ".gcov.json.gz", "lcov": ".info", "pprof": ".pb.gz", "cobertura": ".xml", "html": ".html",
	"callgrind": ".callgrind.out",
}

// writeGcov writes the .gcov files into the -o directory (default: the
// working directory, where it says on stderr which files it wrote, as gcov
// does: they replace any of the same name). When that fails, they all go
// to a new temporary directory instead.
func (r *reportFlags) writeGcov(p *profile.Profile, opt output.Options, stderr io.Writer) error {
	dir := r.out
	if dir == "" {
		dir = "."
	}
	err := os.MkdirAll(dir, 0o755)
	if err == nil {
		var written []string
		written, err = output.WriteGcov(dir, p, opt.ReadFile)
		if r.out == "" {
			for _, name := range written {
				fmt.Fprintf(stderr, "patchprof: wrote %s\n", name)
			}
		}
	}
	var nameErr *output.GcovNameError
	if err == nil || errors.As(err, &nameErr) {
		return err
	}
	e := &setAsideError{what: "the .gcov files", path: dir, err: cause(err)}
	tmp, terr := os.MkdirTemp("", "patchprof-gcov-*")
	if terr == nil {
		if _, terr = output.WriteGcov(tmp, p, opt.ReadFile); terr != nil {
			os.RemoveAll(tmp)
		}
	}
	if terr != nil {
		e.asideErr = terr
	} else {
		e.aside = tmp
	}
	return e
}

// loadAll loads saved profiles and merges them when there are several.
func loadAll(paths []string, force bool) (*profile.Profile, error) {
	var ps []*profile.Profile
	for _, path := range paths {
		p, err := profile.Load(path)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	if len(ps) == 1 {
		return ps[0], nil
	}
	return profile.Merge(force, ps...)
}

// reportFlagSet is the flag set of `patchprof report`, parsing into rf.
func reportFlagSet(rf *reportFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("patchprof report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&rf.force, "force", false, "merge profiles of different executables anyway")
	rf.register(fs)
	return fs
}

func reportMain(args []string, stderr io.Writer) int {
	rf := reportFlags{toStdout: true}
	fs := reportFlagSet(&rf)
	files, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(fs, os.Stdout)
			return 0
		}
		return fail(stderr, failed("report: %v (see patchprof report -h)", err))
	}
	if len(files) == 0 {
		return fail(stderr, failed("report takes saved profiles: patchprof report [flags] FILE..."))
	}
	opt, err := rf.options()
	if err != nil {
		return fail(stderr, err)
	}
	if err := rf.checkOutput(); err != nil {
		return fail(stderr, err)
	}
	p, err := loadAll(files, rf.force)
	if err != nil {
		return fail(stderr, err)
	}
	if err := rf.write(p, opt, stderr); err != nil {
		return fail(stderr, err)
	}
	return 0
}

// newMergeFlags is the flag set of `patchprof merge`.
func newMergeFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("patchprof merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("o", "", "write the merged profile to `FILE` (- is stdout)")
	fs.Bool("force", false, "merge profiles of different executables anyway")
	return fs
}

func mergeMain(args []string, stderr io.Writer) int {
	fs := newMergeFlags()
	files, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(fs, os.Stdout)
			return 0
		}
		return fail(stderr, failed("merge: %v (see patchprof merge -h)", err))
	}
	out := fs.Lookup("o").Value.String()
	force := fs.Lookup("force").Value.String() == "true"
	if out == "" || len(files) == 0 {
		return fail(stderr, failed("merge needs -o OUT and saved profiles: patchprof merge [--force] -o OUT FILE..."))
	}
	if err := checkOutput("-o", out, outReplace); err != nil {
		return fail(stderr, err)
	}
	p, err := loadAll(files, force)
	if err != nil {
		return fail(stderr, err)
	}
	if err := saveProfile(p, out, stderr); err != nil {
		return fail(stderr, err)
	}
	return 0
}

// parseInterspersed parses the flags of `report` and `merge` wherever they
// stand among the file names (`merge a.json b.json -o all.json`), as most
// tools' own subcommands do, and returns the file names. After "--" every
// argument is a file name. The main command does not use it: there the
// first argument that is not a flag is the program, and what follows is
// the program's.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" && !takesValue(fs, args[:n-1]) {
			return append(files, rest...), nil
		}
		if len(rest) == 0 {
			return files, nil
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
}

// takesValue reports whether the last of args is a flag of fs that takes
// the next argument as its value (so a following "--" is that value).
func takesValue(fs *flag.FlagSet, args []string) bool {
	if len(args) == 0 {
		return false
	}
	a := args[len(args)-1]
	if !strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
		return false
	}
	f := fs.Lookup(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"))
	return f != nil && !isBoolFlag(f)
}
