//go:build linux

package integration

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestFuncsCalls checks exact call counts with --funcs: work 1000, fib 1973
// (fib(15) with its recursion), never 0, main 1; optimized and without
// debug information too (--funcs needs only the symbol table).
func TestFuncsCalls(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		dwarf bool
	}{
		{"O0", []string{"-g", "-O0"}, true},
		{"O2", []string{"-g", "-O2"}, true},
		{"O0-nodebug", []string{"-O0"}, false},
		{"O2-nodebug-nopie", []string{"-O2", "-no-pie", "-fno-pie"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			needs(t)
			t.Parallel()
			exe := buildC(t, "calls.c", tc.flags...)
			res, p := runProfile(t, runOpts{args: []string{"--funcs", exe}})
			wantExitCode(t, res, p, 0)
			if p.Mode != "funcs" {
				t.Errorf("mode %q, want \"funcs\"", p.Mode)
			}
			if !strings.Contains(res.stdout, "sum 1499500 fib 610") {
				t.Errorf("target's stdout %q, want it to hold \"sum 1499500 fib 610\"", res.stdout)
			}
			wantFunc(t, p, "work", 1000)
			wantFunc(t, p, "fib", 1973)
			wantFunc(t, p, "never", 0)
			wantFunc(t, p, "main", 1)
			if len(p.Lines) != 0 {
				t.Errorf("%d lines in a --funcs profile, want none", len(p.Lines))
			}
			for _, name := range []string{"work", "fib", "never", "main"} {
				f, ok := funcByName(p, name)
				if !ok {
					continue
				}
				if _, err := strconv.ParseUint(strings.TrimPrefix(f.Address, "0x"), 16, 64); err != nil || !strings.HasPrefix(f.Address, "0x") {
					t.Errorf("function %s: address %q, want 0x-prefixed hex", name, f.Address)
				}
				if tc.dwarf && name != "main" {
					if filepath.Base(f.File) != "calls.c" || !filepath.IsAbs(f.File) {
						t.Errorf("function %s: file %q, want the absolute path of calls.c", name, f.File)
					}
				}
			}
			if tc.dwarf {
				// The line of a function is the line-table row of its entry
				// (docs/profile-format.md): inside work, and at -O0 the
				// line of the opening brace, where gcc puts the prologue.
				f, _ := funcByName(p, "work")
				first, last := funcLines(t, "calls.c", "work")
				if f.Line < first || f.Line > last {
					t.Errorf("function work: line %d, want a line of work (%d-%d)", f.Line, first, last)
				}
				if tc.name == "O0" && f.Line != first+1 {
					t.Errorf("function work: line %d, want %d (the opening brace)", f.Line, first+1)
				}
			}
			// Every function entry is a site of kind func, counted like
			// its function.
			sites := make(map[uint64]siteEntry)
			for _, s := range p.Sites {
				a, err := strconv.ParseUint(strings.TrimPrefix(s.Address, "0x"), 16, 64)
				if err != nil {
					t.Errorf("site address %q: %v", s.Address, err)
					continue
				}
				sites[a] = s
			}
			for _, name := range []string{"work", "fib", "never", "main"} {
				f, ok := funcByName(p, name)
				if !ok {
					continue
				}
				a, _ := strconv.ParseUint(strings.TrimPrefix(f.Address, "0x"), 16, 64)
				s, ok := sites[a]
				switch {
				case !ok:
					t.Errorf("function %s at %s: no site there", name, f.Address)
				case !strings.Contains(s.Kind, "func"):
					t.Errorf("function %s at %s: site kind %q, want func", name, f.Address, s.Kind)
				case s.Count != f.Count:
					t.Errorf("function %s at %s: site count %d, function count %d", name, f.Address, s.Count, f.Count)
				}
			}
		})
	}
}

// TestFuncsTable checks the function table of the report: sorted by count,
// then name, as COUNT NAME FILE:LINE.
func TestFuncsTable(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "calls.c", "-g", "-O0")
	out := filepath.Join(t.TempDir(), "report.txt")
	res, p := runProfile(t, runOpts{args: []string{"--funcs", "-o", out, exe}})
	wantExitCode(t, res, p, 0)
	report := readFile(t, out)
	type row struct {
		count int64
		name  string
		where string
	}
	var rows []row
	for _, l := range strings.Split(report, "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		r := row{count: n, name: f[1]}
		if len(f) > 2 {
			r.where = f[2]
		}
		rows = append(rows, r)
	}
	byName := make(map[string]row)
	for _, r := range rows {
		byName[r.name] = r
	}
	for name, want := range map[string]int64{"fib": 1973, "work": 1000, "main": 1, "never": 0} {
		r, ok := byName[name]
		if !ok {
			t.Errorf("function table has no row for %s; report:\n%s", name, tail(report))
			continue
		}
		if r.count != want {
			t.Errorf("function table: %s counted %d, want %d", name, r.count, want)
		}
	}
	if r := byName["work"]; !strings.Contains(r.where, "calls.c:") {
		t.Errorf("function table: work at %q, want calls.c:LINE", r.where)
	}
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if a.count < b.count || (a.count == b.count && a.name > b.name) {
			t.Errorf("function table not sorted by count, then name: %v before %v", a, b)
		}
	}
}

// TestLinesAndFuncs checks that both modes together give both sets of
// counts, exact.
func TestLinesAndFuncs(t *testing.T) {
	needs(t)
	t.Parallel()
	exe := buildC(t, "calls.c", "-g", "-O0")
	res, p := runProfile(t, runOpts{args: []string{"--lines", "--funcs", exe}})
	wantExitCode(t, res, p, 0)
	if p.Mode != "lines,funcs" {
		t.Errorf("mode %q, want \"lines,funcs\"", p.Mode)
	}
	wantFunc(t, p, "work", 1000)
	wantFunc(t, p, "fib", 1973)
	wantFunc(t, p, "never", 0)
	wantLine(t, p, "calls.c", markerLine(t, "calls.c", "WORK_BODY"), 1000)
	wantLine(t, p, "calls.c", markerLine(t, "calls.c", "FIB_TEST"), 1973)
	wantLine(t, p, "calls.c", markerLine(t, "calls.c", "NEVER_BODY"), 0)
}
