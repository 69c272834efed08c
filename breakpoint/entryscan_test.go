package breakpoint

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/symtab"
)

// TestEntryScanMatchesGraph plans the jumps of every function entry of
// whole binaries under --funcs twice, once with the linear scan
// (entryScan) where it serves and once with every function's flow graph
// (Plan.entryGraphs), and wants the same plan site by site: the jump's
// length, the shortest patch, whether it keeps the flags, the reason a
// site keeps its breakpoint; but where the graph could not be built at
// all, which the scan, reading lengths only, may still plan. The binaries: the plan-test target at -O0
// and -O2, a static C program (the C library's assembly, with its jumps
// into other functions), and the system's C library. Planned a third time
// with PlanOptions.LazyEntries, each entry's patch planned at its first
// JumpLen, the plan is again the same (wantLazy).
func TestEntryScanMatchesGraph(t *testing.T) {
	exes := wholeBinaries(t)
	for _, libc := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"} {
		if _, err := os.Stat(libc); err == nil {
			exes = append(exes, libc)
			break
		}
	}
	for _, exe := range exes {
		t.Run(filepath.Base(exe), func(t *testing.T) {
			sym, err := symtab.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer sym.Close()
			lt, err := lineinfo.Read(exe)
			if err != nil {
				lt = &lineinfo.Table{} // the system's C library has no line table
			}
			po := PlanOptions{Funcs: true}
			if f, err := os.Open(exe); err == nil {
				po.LandingPads, err = cfg.ELFLandingPads(f)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			scan := NewPlan(sym, lt, po)
			got := scan.PlanJumps(sym, po)
			graph := NewPlan(sym, lt, po)
			graph.entryGraphs = true
			want := graph.PlanJumps(sym, po)
			a, b := scan.Table, graph.Table
			if a.Len() != b.Len() || a.Len() == 0 {
				t.Fatalf("%d and %d sites", a.Len(), b.Len())
			}
			bad, more := 0, 0
			for i := range a.Len() {
				if b.KeptReason(i) == JumpNoFlow && a.KeptReason(i) == "" {
					// The graph could not be built (an instruction
					// x86asm does not know, such as rdpkru, or dead
					// bytes after a ret) but the scan read the whole
					// function: the patch the graph's functions get.
					more++
					t.Logf("site %#x: jump %d where the graph could not be built", a.Addr(i), a.JumpLen(i))
					continue
				}
				if a.JumpLen(i) != b.JumpLen(i) || a.jump.least[i] != b.jump.least[i] || a.KeepFlags(i) != b.KeepFlags(i) || a.KeptReason(i) != b.KeptReason(i) {
					if bad++; bad <= 20 {
						t.Errorf("site %#x: jump %d (least %d, keep flags %v, kept: %q), want %d (%d, %v, %q)", a.Addr(i),
							a.JumpLen(i), a.jump.least[i], a.KeepFlags(i), a.KeptReason(i), b.JumpLen(i), b.jump.least[i], b.KeepFlags(i), b.KeptReason(i))
					}
				}
			}
			if bad > 0 || got.Sites != want.Sites+more {
				t.Errorf("%d sites differ; %d jumps, want %d and %d the graph could not plan", bad, got.Sites, want.Sites, more)
			}
			t.Logf("%d sites, %d take a jump, %d planned by the scan", a.Len(), got.Sites, scan.entryScanned)
			if scan.entryScanned == 0 {
				t.Errorf("no entry planned by the scan")
			}
			wantLazy(t, sym, lt, po, scan.Table, got)
		})
	}
}

// wholeBinaries builds the binaries the whole-table plans are compared
// on: the plan-test target at -O0 and -O2, and a static C program built
// -O2 (the C library's code: its assembly, jumps into other functions,
// jump tables, short blocks and padding), when the static C library is
// installed.
func wholeBinaries(t *testing.T) []string {
	t.Helper()
	mustHaveCC(t)
	var exes []string
	for _, opt := range []string{"-O0", "-O2"} {
		exes = append(exes, filepath.Join(buildTarget(t, opt).dir, "prog"))
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "puts.c")
	if err := os.WriteFile(src, []byte("#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	static := filepath.Join(dir, "puts")
	if out, err := exec.Command("gcc", "-g", "-O2", "-static", "-o", static, src).CombinedOutput(); err != nil {
		t.Logf("no static build (%v): %s", err, out)
	} else {
		exes = append(exes, static)
	}
	return exes
}

// wantLazy plans sym again with PlanOptions.LazyEntries and wants, once
// each site's patch is planned on its first need (JumpLen), the plan
// want of table w site by site, and the same tally of jumps and reasons.
func wantLazy(t *testing.T, sym *symtab.File, lt *lineinfo.Table, po PlanOptions, w *Table, want JumpPlan) {
	t.Helper()
	po.LazyEntries = true
	lazy := NewPlan(sym, lt, po)
	got := lazy.PlanJumps(sym, po)
	a := lazy.Table
	if _, _, n, _, _ := a.LazyJumps(); n == 0 {
		t.Fatalf("lazy: no entry left to its first need")
	}
	bad := 0
	for i := range a.Len() {
		n := a.JumpLen(i) // plans it
		if n != w.JumpLen(i) || a.jump.least[i] != w.jump.least[i] || a.KeepFlags(i) != w.KeepFlags(i) || a.KeptReason(i) != w.KeptReason(i) {
			if bad++; bad <= 20 {
				t.Errorf("lazy: site %#x: jump %d (least %d, keep flags %v, kept: %q), want %d (%d, %v, %q)", a.Addr(i),
					n, a.jump.least[i], a.KeepFlags(i), a.KeptReason(i), w.JumpLen(i), w.jump.least[i], w.KeepFlags(i), w.KeptReason(i))
			}
		}
	}
	planned, kept, left, _, _ := a.LazyJumps()
	if left != 0 {
		t.Errorf("lazy: %d entries still unplanned after every JumpLen", left)
	}
	reasons := map[string]int{}
	for r, n := range got.Reasons {
		reasons[r] += n
	}
	for r, n := range kept {
		reasons[r] += n
	}
	if got.Sites+planned != want.Sites || !maps.Equal(reasons, want.Reasons) {
		t.Errorf("lazy: %d+%d jumps, reasons %v; want %d, %v", got.Sites, planned, reasons, want.Sites, want.Reasons)
	}
}
