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
var formats = []string{"listing", "gcov", "gcov-json", "lcov", "pprof", "cobertura", "html"}

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
	wd         string // the working directory, for the exports that record it
}

func (r *reportFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&r.out, "o", "", "write the report to `PATH` instead of stderr (a directory for --format gcov)")
	fs.StringVar(&r.print, "print", "counts", "listing format: counts, histogram or scaled")
	fs.StringVar(&r.format, "format", "listing", "report `FORMAT`: listing, gcov (.gcov files), gcov-json (.gcov.json.gz), lcov (tracefile), pprof (protobuf), cobertura (XML), html (one page)")
	fs.StringVar(&r.color, "color", "auto", "heat colours in the listing: `WHEN` is auto (on a terminal, unless NO_COLOR is set), always or never")
	fs.StringVar(&r.fold, "fold", "auto", "fold runs of more than 6 lines that did not run, keeping 2 lines each side: `WHEN` is auto (on a terminal), always or never")
	fs.IntVar(&r.top, "top", 0, "list only the `N` hottest lines and most called functions")
	fs.Var(&r.sourceDirs, "source-dir", "also look for sources in `DIR` (repeatable)")
	fs.Var(&r.substs, "subst-path", "rewrite source path prefix `FROM=TO` (repeatable)")
}

func (r *reportFlags) options() (output.Options, error) {
	if !slices.Contains(formats, r.format) {
		return output.Options{}, &userError{msg: fmt.Sprintf("--format %q: use %s", r.format, strings.Join(formats, ", "))}
	}
	for _, f := range []struct{ name, value string }{{"--color", r.color}, {"--fold", r.fold}} {
		if f.value != "auto" && f.value != "always" && f.value != "never" {
			return output.Options{}, &userError{msg: fmt.Sprintf("%s %q: use auto, always or never", f.name, f.value)}
		}
	}
	if r.top < 0 {
		return output.Options{}, &userError{msg: fmt.Sprintf("--top %d: give a positive number of lines", r.top)}
	}
	style, err := output.ParseStyle(r.print)
	if err != nil {
		return output.Options{}, &userError{msg: fmt.Sprintf("--print %q: use counts, histogram or scaled", r.print)}
	}
	opt := output.Options{Style: style, SourceDirs: r.sourceDirs, Top: r.top}
	for _, s := range r.substs {
		sub, err := output.ParseSubst(s)
		if err != nil {
			return opt, &userError{msg: fmt.Sprintf("--subst-path %q: write it as FROM=TO", s)}
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
	return opt, nil
}

// write renders p in the chosen format: the listing to -o FILE or to stderr;
// exports to -o PATH or, for text exports from `patchprof report`, stdout.
func (r *reportFlags) write(p *profile.Profile, opt output.Options, stderr io.Writer) error {
	switch {
	case r.format == "gcov":
		dir := r.out
		if dir == "" {
			dir = "."
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return &userError{msg: fmt.Sprintf("cannot create %s for the .gcov files: %v", dir, err)}
		}
		_, err := output.WriteGcov(dir, p, nil)
		return err
	case binaryFormats[r.format] && r.out == "":
		return &userError{msg: fmt.Sprintf("--format %s writes a compressed file: give -o FILE", r.format)}
	}
	var w io.Writer = stderr
	if r.format != "listing" {
		w = os.Stdout
	}
	var f *os.File
	if r.out != "" {
		var err error
		if f, err = os.Create(r.out); err != nil {
			return &userError{msg: fmt.Sprintf("cannot write the report: %v", err)}
		}
		w = f
	}
	var err error
	switch r.format {
	case "lcov":
		err = output.WriteLCOV(w, p)
	case "pprof":
		err = output.WritePprof(w, p)
	case "gcov-json":
		err = output.WriteGcovJSON(w, p, output.GcovJSONOptions{Cwd: r.wd})
	case "cobertura":
		err = output.WriteCobertura(w, p, output.CoberturaOptions{Root: r.wd, Timestamp: time.Now().Unix()})
	case "html":
		err = output.WriteHTML(w, p, opt)
	default:
		t := terminalOf(w)
		opt.Color = r.color == "always" || (r.color == "auto" && t.isTerminal && !noColor())
		opt.Fold = r.fold == "always" || (r.fold == "auto" && t.isTerminal)
		if opt.Width == 0 {
			opt.Width = t.width
		}
		err = output.Write(w, p, opt)
	}
	if f != nil {
		err = errors.Join(err, f.Close())
	}
	return err
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

func reportMain(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("patchprof report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var rf reportFlags
	force := fs.Bool("force", false, "merge profiles of different executables anyway")
	rf.register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(fs, os.Stdout)
			return 0
		}
		return fail(stderr, &userError{msg: fmt.Sprintf("report: %v (see patchprof report -h)", err)})
	}
	if fs.NArg() == 0 {
		return fail(stderr, &userError{msg: "report takes saved profiles: patchprof report [flags] FILE..."})
	}
	opt, err := rf.options()
	if err != nil {
		return fail(stderr, err)
	}
	p, err := loadAll(fs.Args(), *force)
	if err != nil {
		return fail(stderr, err)
	}
	if err := rf.write(p, opt, stderr); err != nil {
		return fail(stderr, err)
	}
	return 0
}

func mergeMain(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("patchprof merge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "write the merged profile to `FILE`")
	force := fs.Bool("force", false, "merge profiles of different executables anyway")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(fs, os.Stdout)
			return 0
		}
		return fail(stderr, &userError{msg: fmt.Sprintf("merge: %v (see patchprof merge -h)", err)})
	}
	if *out == "" || fs.NArg() == 0 {
		return fail(stderr, &userError{msg: "merge needs -o OUT and saved profiles: patchprof merge [--force] -o OUT FILE..."})
	}
	p, err := loadAll(fs.Args(), *force)
	if err != nil {
		return fail(stderr, err)
	}
	if err := p.Save(*out); err != nil {
		return fail(stderr, &userError{msg: fmt.Sprintf("cannot save %s: %v", *out, err)})
	}
	return 0
}
