package main

import (
	"flag"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// TestHelpGrouped: --help shows every flag under a heading, with two dashes
// (one for -o and -p) and the placeholder of its value.
func TestHelpGrouped(t *testing.T) {
	var help string
	code := 0
	help = captureStdout(t, func() { code = Main([]string{"--help"}, io.Discard) })
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	for _, want := range []string{
		"\nWhat to count:\n  --lines\n", "\nWhat to plant in:\n  --func REGEXP\n", "\nEngine:\n  --engine NAME\n",
		"\nOutput:\n  -o PATH\n", "\n  --print FORMAT\n", "\n  --format FORMAT\n", "\nAttach:\n  -p PID\n",
		"\n  --duration D\n", "\n  --version\n", "\n  -h, --help\n",
	} {
		if !strings.Contains(help, want) {
			t.Errorf("--help lacks %q:\n%s", want, help)
		}
	}
	for _, line := range strings.Split(help, "\n") {
		if strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --") && !strings.HasPrefix(line, "  -o ") &&
			!strings.HasPrefix(line, "  -p ") && line != "  -v" && !strings.HasPrefix(line, "  -h, --help") {
			t.Errorf("--help shows a long flag with one dash: %q", line)
		}
	}
}

// TestEveryFlagGrouped: no flag of the main command, report, merge or
// watch is left out of the help.
func TestEveryFlagGrouped(t *testing.T) {
	var grouped []string
	for _, g := range flagGroups {
		grouped = append(grouped, g.names...)
	}
	for _, fs := range []*flag.FlagSet{mainFlagSet(new(mainFlagValues)), reportFlagSet(new(reportFlags)), newMergeFlags(), watchFlagSet(new(watchFlags), new(passFlags))} {
		fs.VisitAll(func(f *flag.Flag) {
			if !slices.Contains(grouped, f.Name) {
				t.Errorf("%s: flag %s is in no group of the help", fs.Name(), f.Name)
			}
		})
	}
}

// TestVersionText: --version names the module version, the VCS revision
// with its time and state, and the toolchain; a build without VCS
// information says so.
func TestVersionText(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"},
		{Key: "vcs.revision", Value: "8ce182ab9fbfb6e0c2a2e184e1ff5bdab49d1515"},
		{Key: "vcs.time", Value: "2026-11-26T09:11:52Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	want := "patchprof v1.2.3, revision 8ce182ab9fbfb6e0c2a2e184e1ff5bdab49d1515 (2026-11-26T09:11:52Z, modified), go1.26.8 linux/amd64\n"
	if got := versionText(bi, true); got != want {
		t.Errorf("versionText = %q, want %q", got, want)
	}
	bi = &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"}}}
	want = "patchprof (devel), revision unknown (built without VCS information), go1.26.8 linux/amd64\n"
	if got := versionText(bi, true); got != want {
		t.Errorf("versionText = %q, want %q", got, want)
	}
	var code int
	out := captureStdout(t, func() { code = Main([]string{"--version"}, io.Discard) })
	if code != 0 || !strings.HasPrefix(out, "patchprof ") || strings.Count(out, "\n") != 1 {
		t.Errorf("--version: exit %d, printed %q; want 0 and one line", code, out)
	}
}
