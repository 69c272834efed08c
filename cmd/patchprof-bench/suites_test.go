package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// notes are a jump profile's notes as profiler/jumps.go writes them.
var notes = []string{
	"engine: 120 sites can count in the target, 100 were patched, each with its function at its first hit (each process counted apart); 7 block counts follow from the others' (not planted); the others trap, served out of line (4321 traps in all)",
	"engine: sites that keep a breakpoint, by reason: 12 (4000 traps): flags live: shl; 5 (321 traps): traps by design: int3; 3: at run time: code changed",
}

func TestTrapsOf(t *testing.T) {
	if n, ok := trapsOf(notes); !ok || n != 4321 {
		t.Errorf("trapsOf = %d, %v; want 4321, true", n, ok)
	}
	if n, ok := trapsOf([]string{"merged from 2 profiles"}); ok {
		t.Errorf("trapsOf of no engine note = %d, true; want false", n)
	}
}

func TestTrapReasons(t *testing.T) {
	got := trapReasons(notes)
	want := []TrapReason{
		{Reason: "flags live: shl", Sites: 12, Traps: 4000},
		{Reason: "traps by design: int3", Sites: 5, Traps: 321},
		{Reason: "at run time: code changed", Sites: 3},
	}
	if !slices.Equal(got, want) {
		t.Errorf("trapReasons = %+v, want %+v", got, want)
	}
	if got := trapReasons(notes[:1]); got != nil {
		t.Errorf("trapReasons without the reasons' note = %+v, want none", got)
	}
}

func TestSuiteNote(t *testing.T) {
	got := suiteNote("zlib", 1000000, 4400, trapReasons(notes))
	want := "zlib: 4,400 traps of 1,000,000 hits (0.4400%)\n" +
		"  4,000 traps at 12 sites: flags live: shl\n" +
		"  321 traps at 5 sites: traps by design: int3\n" +
		"  79 traps at the functions' first hits, each process apart\n"
	if got != want {
		t.Errorf("suiteNote =\n%s\nwant\n%s", got, want)
	}
	if got := formatShare(1, 0); got != "-" {
		t.Errorf("formatShare(1, 0) = %q, want -", got)
	}
}

func TestSuiteWorkloads(t *testing.T) {
	ws := suiteWorkloads()
	if len(ws) != len(suites)*len(suiteOpts) {
		t.Fatalf("%d suite workloads, want %d", len(ws), len(suites)*len(suiteOpts))
	}
	if ws[0].Name != "zlib" || ws[0].Opt != "-O0" || ws[1].Name != "zlib-O2" || ws[1].Opt != "-O2" {
		t.Errorf("first workloads %s %s, %s %s; want zlib -O0, zlib-O2 -O2", ws[0].Name, ws[0].Opt, ws[1].Name, ws[1].Opt)
	}
	seen := make(map[string]bool)
	for _, w := range workloads {
		if seen[w.Name] {
			t.Errorf("two workloads named %s", w.Name)
		}
		seen[w.Name] = true
	}
}

func TestSuiteRow(t *testing.T) {
	w := suiteWorkloads()[1]
	s := time.Second
	ms := []Measure{
		{Config: cfgNative, Label: "native", Times: []time.Duration{2 * s, s, 3 * s}},
		{Config: cfgGcov, Label: "gcov: gcc --coverage", Times: []time.Duration{3 * s}},
		{Config: cfgJump, Label: "patchprof --engine jump", Times: []time.Duration{4 * s}},
	}
	got := suiteRow(w, ms, 2000000, 20, time.Minute)
	want := SuiteRow{Suite: "zlib", Opt: "-O2", Native: "2.00 s", Gcov: "1.50x", Jump: "2.00x", Traps: "20", Hits: "2,000,000", Share: "0.0010%"}
	if got != want {
		t.Errorf("suiteRow = %+v, want %+v", got, want)
	}
	var b strings.Builder
	if err := writeSuiteTable(&b, []SuiteRow{got}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| zlib | -O2 | 2.00 s | 1.50x | 2.00x | 20 | 2,000,000 | 0.0010% |\n") {
		t.Errorf("writeSuiteTable:\n%s", b.String())
	}
}

func TestCountCheckerVaries(t *testing.T) {
	c := countChecker{varies: "draw random numbers"}
	c.add(cfgJump, prof(5, 7, 1))
	c.add(cfgJump, prof(5, 8, 2))
	text, ok := c.verdict("jimtcl")
	if !ok || !strings.Contains(text, "counts not compared between runs (jump 2), which draw random numbers") {
		t.Errorf("a suite whose counts vary: ok %v:\n%s", ok, text)
	}
}
