package main

import (
	"go/parser"
	"go/token"
	"os"
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
