package main

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCommandImports: the command parses flags, talks to the terminal and
// wires the packages; machine code and the site table are the profiling
// package's (profiler.Disasm builds the disassembly view).
func TestCommandImports(t *testing.T) {
	banned := []string{
		"golang.org/x/arch/x86/x86asm",
		"github.com/patchprof/patchprof/breakpoint",
		"github.com/patchprof/patchprof/cfg",
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			for _, b := range banned {
				if path == b {
					t.Errorf("%s imports %s", name, path)
				}
			}
		}
	}
}

// TestStartCost: every run pays the package initialization of everything
// linked in, whatever it does (issue 28). These packages' inits cost more
// than what patchprof uses them for: google/pprof's profile package
// compiles some twenty regular expressions (patchprof writes pprof with
// its own internal/pprofpb), runtime/metrics builds its table of every
// metric (serve reads runtime.ReadMemStats).
func TestStartCost(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not in PATH: cannot list the command's packages")
	}
	out, err := exec.Command(goCmd, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch pkg {
		case "github.com/google/pprof/profile", "runtime/metrics":
			t.Errorf("patchprof links %s, whose init every run pays", pkg)
		}
	}
}
