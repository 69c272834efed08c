//go:build linux

package integration

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// o2tables.c has the indirect jumps gcc -O2 gave five functions of Jim
// Tcl's interpreter, which once had no flow graph (their lines counted at
// rows, every hit a trap under the in-process engine): a switch whose
// table address was loaded many blocks back (quoting), a switch on a
// field compared in memory with spills between the compare and its branch
// (sortby), and a tail call through a handler in an array of structures
// (evalnode).

// o2tablesCalls are the call counts of o2tables.c by construction (main's
// comments).
var o2tablesCalls = map[string]int64{
	"quoting": 1, "on_a": 1, "on_b": 2, "on_c": 3, "on_d": 4, "on_e": 5, "on_f": 6, "on_g": 7, "on_h": 8,
	"sortby": 15, "prepare": 15, "by_int": 2, "by_rev": 4, "by_abs": 6, "by_odd": 8, "by_none": 10,
	"evalnode": 37, "op_add": 3, "op_sub": 5, "op_mul": 7,
}

// o2tablesCases are the counts of each function's jump-table edges by
// construction, sorted: one per case, each case run a different number of
// times.
var o2tablesCases = map[string][]int64{
	"quoting":  {1, 2, 3, 4, 5, 6, 7, 8},
	"sortby":   {1, 2, 3, 4, 5},
	"evalnode": {1, 2, 3, 4, 5, 6},
}

// TestO2Tables runs o2tables.c built -O2 (as a PIE and not) under
// --blocks: the three functions have a flow graph, each jump-table edge
// counts its case's runs exactly, flow is conserved, every call count is
// exact, and under the in-process engine no site of them keeps a
// breakpoint (about one trap per patched site).
func TestO2Tables(t *testing.T) {
	needs(t)
	t.Parallel()
	for _, bld := range []struct {
		flags []string
		cases []string // the functions whose switch is a jump table
	}{
		{[]string{"-g", "-O2"}, []string{"quoting", "sortby", "evalnode"}},
		// Without relocations to apply, gcc makes sortby's switch a
		// load from a table of the function pointers it assigns.
		{[]string{"-g", "-O2", "-no-pie", "-fno-pie"}, []string{"quoting", "evalnode"}},
	} {
		flags := bld.flags
		t.Run(strings.Join(flags, ""), func(t *testing.T) {
			exe := buildC(t, "o2tables.c", flags...)
			res, p := runBlocks(t, exe)
			wantExitCode(t, res, nil, 0)
			if res.stdout != "r 267 sum 385 notes 0\n" {
				t.Errorf("%s: the target's output is %q", res.cmdline, res.stdout)
			}
			for _, n := range p.Notes {
				for name := range o2tablesCases {
					if strings.HasPrefix(n, "no block counts for "+name+":") {
						t.Errorf("%s: %q", res.cmdline, n)
					}
				}
			}
			fnOf := map[string]string{} // function address -> name
			for _, f := range p.Functions {
				fnOf[f.Address] = f.Name
				if want, ok := o2tablesCalls[f.Name]; ok && f.Count != want {
					t.Errorf("%s: %s called %d times, want %d", res.cmdline, f.Name, f.Count, want)
				}
			}
			blockFn := map[string]string{}
			for _, b := range p.Blocks {
				blockFn[b.Address] = fnOf[b.Function]
			}
			got := map[string][]int64{}
			for _, e := range p.Edges {
				if e.Kind == "jumptable" {
					got[blockFn[e.From]] = append(got[blockFn[e.From]], e.Count)
				}
			}
			for _, name := range bld.cases {
				want := o2tablesCases[name]
				slices.Sort(got[name])
				if !slices.Equal(got[name], want) {
					t.Errorf("%s: %s's jump-table edges counted %v, want %v (one per case)", res.cmdline, name, got[name], want)
				}
			}
			checkFlow(t, res.cmdline, p)
			if e := os.Getenv(engineEnv); e == "" || e == "jump" {
				wantFewTraps(t, res, &profile{Notes: p.Notes}, 10)
			}
		})
	}
}
