package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// A flagGroup is one heading of the help and the flags under it, in the
// order they are shown.
type flagGroup struct {
	title string
	names []string
}

// flagGroups order the help as a user decides a run: what to watch (for
// patchprof watch), what to count, where, how hits are served, where the
// report goes, and attaching. Every flag of every command is in one group
// (TestEveryFlagGrouped).
var flagGroups = []flagGroup{
	{"What to watch", []string{"exe", "cgroup", "pid-file", "poll", "no-events", "max-procs", "per-process"}},
	{"What to count", []string{"lines", "funcs", "blocks", "calls", "time", "sample-rate", "time-fallback"}},
	{"What to plant in", []string{"func", "file", "lib", "std"}},
	{"Engine", []string{"engine", "pin", "no-follow"}},
	{"Output", []string{"o", "v", "format", "print", "top", "instances", "sort", "heat", "all-funcs", "all-files", "color", "fold", "source-dir", "subst-path", "disasm", "save", "interval", "force"}},
	{"Attach", []string{"p", "duration"}},
	{"Serve the live counts over HTTP", []string{"listen", "listen-token", "metrics-top"}},
	{"Other", []string{"no-cache", "version", "help"}},
}

// usage writes the help of the command whose flags are fs to w: its
// synopsis, its flags by group, and the exit statuses.
func usage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, "usage: patchprof [flags] [--] PROGRAM [ARGS...]\n"+
		"       patchprof [flags] -p PID\n"+
		"       patchprof report [flags] FILE...\n"+
		"       patchprof merge [--force] -o OUT FILE...\n"+
		"       patchprof watch (--exe PATH | --cgroup PATH | --pid-file FILE) --save FILE [flags]\n")
	printFlags(fs, w)
	fmt.Fprintf(w, "\nexit status: the program's own (128+N when signal N killed it), or\n"+
		"  %d  patchprof failed (a bad flag, profile or output path, ptrace refused, a write failed)\n"+
		"  %d  the program cannot be run (not executable, a directory, not an x86-64 ELF executable)\n"+
		"  %d  the program was not found\n", exitFailure, exitCannotRun, exitNotFound)
}

// printFlags writes the flags of fs by group, each as it is typed: --name
// (-o and -p, one letter, with one dash) and the placeholder of its value.
func printFlags(fs *flag.FlagSet, w io.Writer) {
	for _, g := range flagGroups {
		var b strings.Builder
		for _, name := range g.names {
			if name == "help" {
				fmt.Fprintf(&b, "  -h, --help\n\tshow this help\n")
				continue
			}
			f := fs.Lookup(name)
			if f == nil {
				continue
			}
			placeholder, text := flag.UnquoteUsage(f)
			if isBoolFlag(f) {
				placeholder = ""
			}
			dash := "--"
			if len(name) == 1 {
				dash = "-"
			}
			fmt.Fprintf(&b, "  %s%s", dash, name)
			if placeholder != "" {
				fmt.Fprintf(&b, " %s", placeholder)
			}
			if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "0s" && def != "[]" {
				text += " (default " + def + ")"
			}
			fmt.Fprintf(&b, "\n\t%s\n", text)
		}
		if b.Len() > 0 {
			fmt.Fprintf(w, "\n%s:\n%s", g.title, b.String())
		}
	}
}

// versionText is what --version prints: patchprof's module version, the
// VCS revision it was built from (its time, and whether the tree had
// uncommitted changes), and the Go toolchain, from the build information
// the linker records (runtime/debug.ReadBuildInfo).
func versionText(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return fmt.Sprintf("patchprof (no build information) %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	rev := "revision unknown (built without VCS information)"
	if r := settings["vcs.revision"]; r != "" {
		rev = "revision " + r
		var at []string
		if t := settings["vcs.time"]; t != "" {
			at = append(at, t)
		}
		if settings["vcs.modified"] == "true" {
			at = append(at, "modified")
		}
		if len(at) > 0 {
			rev += " (" + strings.Join(at, ", ") + ")"
		}
	}
	goos, goarch := settings["GOOS"], settings["GOARCH"]
	if goos == "" {
		goos, goarch = runtime.GOOS, runtime.GOARCH
	}
	return fmt.Sprintf("patchprof %s, %s, %s %s/%s\n", version, rev, bi.GoVersion, goos, goarch)
}
