//go:build linux

package integration

import (
	"testing"
)

// tinyCalls are the calls of tinyvirt.cpp's virtual functions in tinyvirt
// 30000 (10,000 rounds over each of its three nodes), by construction: a
// Node and a Text answer ToElement with Node's, an Element with its own;
// by symbol (the profile keeps C++ names mangled).
var tinyCalls = map[string]int64{
	"_ZN4Node9ToElementEv":    20000,
	"_ZN7Element9ToElementEv": 10000,
	"_ZN4Node6ToTextEv":       20000,
	"_ZN4Text6ToTextEv":       10000,
}

// tinyLines are the counts of the lines of those functions, one line
// each, as gcov gives them (TestPaddingTinyGcov).
var tinyLines = map[string]int64{"NODE_ELEMENT": 20000, "ELEMENT": 10000, "NODE_TEXT": 20000, "TEXT": 10000}

// TestPaddingTinyGcov holds tinyLines to gcov's counts of the -O2 build.
// A one-line function whose whole code is the epilogue's (mov %rdi,%rax;
// ret) once lost its line: its only row was taken for the closing
// brace's epilogue (linemodel's markEpilogue).
func TestPaddingTinyGcov(t *testing.T) {
	needs(t)
	t.Parallel()
	got := gcovCounts(t, gcovRun{src: "tinyvirt.cpp", flags: []string{"-O2"}, args: []string{"30000"}})
	for m, n := range tinyLines {
		if l := markerLine(t, "tinyvirt.cpp", m); got[l] != n {
			t.Errorf("gcov: tinyvirt.cpp:%d (%s) %d, want %d", l, m, got[l], n)
		}
	}
}

// TestPaddingTinyO2: at -O2 a virtual function of 3 or 4 bytes (xor
// %eax,%eax; ret, mov %rdi,%rax; ret: TinyXML-2's ToElement and ToText,
// 811,455 traps of its xmltest) has no room for a jmp rel32. Its patch
// covers the alignment padding after it, which nothing reaches: the run
// traps at first hits only, however many calls, and the counts are the
// program's, under every engine.
func TestPaddingTinyO2(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	exe := buildC(t, "tinyvirt.cpp", "-g", "-O2")
	for _, what := range [][]string{{"--funcs"}, {"--lines", "--funcs"}} {
		args := append(append([]string{}, what...), exe, "30000")
		// 60,000 calls of the four: a trap each if they kept their
		// breakpoints.
		acrossEngines(t, args, "elements 10000 texts 10000\n", "a control transfer before the last displaced instruction", func(p *profile) {
			for name, n := range tinyCalls {
				wantFunc(t, p, name, n)
			}
			if len(what) > 1 {
				for m, n := range tinyLines {
					wantLine(t, p, "tinyvirt.cpp", markerLine(t, "tinyvirt.cpp", m), n)
				}
			}
		})
	}
}

// TestPaddingDetach attaches to tinyvirt while it calls its tiny functions
// and detaches: their patches covered padding after them, and every byte
// of the code is the file's again, the padding's too (checkText); the
// program runs on to its end.
func TestPaddingDetach(t *testing.T) {
	jumpOnly(t)
	t.Parallel()
	exe := buildC(t, "tinyvirt.cpp", "-g", "-O2")
	var funcs []string
	for name := range tinyCalls {
		funcs = append(funcs, name)
	}
	attachDetachJump(t, exe, []string{"--funcs"}, funcs)
}
