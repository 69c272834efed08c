package breakpoint

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/symtab"
)

// TestLazyFuncsMatchWhole plans whole binaries twice under --lines --funcs
// --blocks, once up front and once with PlanOptions.LazyFuncs, each
// function then planned at the first JumpLen of its first site (its entry,
// as at a first hit), and wants the same plan site by site: the jump's
// length, the shortest patch, the flags kept, the reason a site keeps its
// breakpoint, whether it is derived, its short patch's host and landing,
// its tail, the arcs its trampoline counts, with --calls the entries that
// check; and the same tally. The binaries are wholeBinaries', with their
// jump tables read from the file.
func TestLazyFuncsMatchWhole(t *testing.T) {
	exes := wholeBinaries(t)
	for _, exe := range exes {
		t.Run(filepath.Base(filepath.Dir(exe))+"/"+filepath.Base(exe), func(t *testing.T) {
			sym, lt := openBuilt(t, exe)
			f, err := os.Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			im, err := cfg.NewELFImage(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, calls := range []bool{false, true} {
				t.Run(fmt.Sprintf("calls=%v", calls), func(t *testing.T) {
					po := PlanOptions{Lines: true, Funcs: true, Blocks: true, Calls: calls, CFGImage: im, CalleeName: cfg.CalleeNames(sym, im)}
					whole := NewPlan(sym, lt, po)
					want := whole.PlanJumps(sym, po)
					po.LazyFuncs = true
					lazy := NewPlan(sym, lt, po)
					got := lazy.PlanJumps(sym, po)
					compareLazy(t, sym, lt, whole.Table, lazy.Table, want, got)
				})
			}
		})
	}
}

// compareLazy plans every function of lazy at its first site, and wants
// each site as w planned it, and the same tally.
func compareLazy(t *testing.T, sym *symtab.File, lt *lineinfo.Table, w, a *Table, want, got JumpPlan) {
	t.Helper()
	if a.Len() != w.Len() || a.Len() == 0 {
		t.Fatalf("%d and %d sites", a.Len(), w.Len())
	}
	_, _, _, d0, _ := a.LazyJumps()
	if a.jump.funcs == nil || a.jump.funcs.left == 0 || d0 != 0 {
		t.Fatalf("no function left to its first hit")
	}
	pending := a.jump.funcs.left
	bad := 0
	errorf := func(format string, args ...any) {
		if bad++; bad <= 20 {
			t.Errorf(format, args...)
		}
	}
	for i := range a.Len() {
		n := a.JumpLen(i) // the first of a function's sites plans it
		if n != w.JumpLen(i) || a.jump.least[i] != w.jump.least[i] || a.KeepFlags(i) != w.KeepFlags(i) || a.KeptReason(i) != w.KeptReason(i) || a.Derived(i) != w.Derived(i) {
			errorf("site %#x: jump %d (least %d, keep flags %v, derived %v, kept: %q), want %d (%d, %v, %v, %q)", a.Addr(i),
				n, a.jump.least[i], a.KeepFlags(i), a.Derived(i), a.KeptReason(i), w.JumpLen(i), w.jump.least[i], w.KeepFlags(i), w.Derived(i), w.KeptReason(i))
		}
		ah, as := a.ShortSite(i)
		wh, ws := w.ShortSite(i)
		if ah != wh || as != ws || a.Landing(i) != w.Landing(i) || a.jump.tail[i] != w.jump.tail[i] {
			errorf("site %#x: short %v at %d (landing %d), tail %d; want %v at %d (%d), %d", a.Addr(i), as, ah, a.Landing(i), a.jump.tail[i], ws, wh, w.Landing(i), w.jump.tail[i])
		}
		if aa, wa := arcsAt(a, i), arcsAt(w, i); !slices.Equal(aa, wa) {
			errorf("site %#x: arcs %v, want %v", a.Addr(i), aa, wa)
		}
	}
	if (a.jump.calls == nil) != (w.jump.calls == nil) {
		t.Fatalf("calls tracked %v, want %v", a.jump.calls != nil, w.jump.calls != nil)
	}
	if cp, wp := a.jump.calls, w.jump.calls; cp != nil {
		if !maps.Equal(cp.pend, wp.pend) || !maps.Equal(cp.ret, wp.ret) || !maps.Equal(cp.tail, wp.tail) {
			t.Errorf("the blocks that record an indirect call differ")
		}
		// The slots are numbered in the order functions are planned:
		// the same entries check, the same sites share their slots.
		if !slices.Equal(slices.Sorted(slices.Values(cp.entries)), slices.Sorted(slices.Values(wp.entries))) {
			t.Errorf("%d entries check, want %d", len(cp.entries), len(wp.entries))
		}
		for i := range a.Len() {
			_, ok := cp.slot[i]
			_, wok := wp.slot[i]
			if ok != wok {
				errorf("site %#x: checks %v, want %v", a.Addr(i), ok, wok)
			}
			if ok && entryOfSlot(a, i) != entryOfSlot(w, i) {
				errorf("site %#x: its slots are entry %d's, want %d's", a.Addr(i), entryOfSlot(a, i), entryOfSlot(w, i))
			}
		}
		if a.CallWords() < len(cp.entries)*2 || len(cp.entries) == 0 && len(wp.entries) > 0 {
			t.Errorf("%d call words reserved for %d entries", a.CallWords(), len(cp.entries))
		}
		t.Logf("%d entries check (%d reserved), %d blocks record a call", len(cp.entries), cp.reserved, len(cp.pend))
	}
	planned, kept, _, derived, short := a.LazyJumps()
	reasons := maps.Clone(got.Reasons)
	for r, n := range kept {
		reasons[r] += n
	}
	if got.Sites+planned != want.Sites || got.Derived+derived != want.Derived || got.Short+short != want.Short || !maps.Equal(reasons, want.Reasons) {
		t.Errorf("lazy: %d+%d jumps, %d+%d derived, %d+%d short, reasons %v; want %d, %d, %d, %v",
			got.Sites, planned, got.Derived, derived, got.Short, short, reasons, want.Sites, want.Derived, want.Short, want.Reasons)
	}
	if a.jump.funcs.left != 0 {
		t.Errorf("%d functions still unplanned after every JumpLen", a.jump.funcs.left)
	}
	if bad > 0 {
		t.Errorf("%d differences", bad)
	}
	t.Logf("%d sites, %d functions planned at their first site: %d jumps, %d derived, %d short, %d arcs", a.Len(), pending, want.Sites, want.Derived, want.Short, len(a.jump.arcs))
	if len(a.jump.arcs) != len(w.jump.arcs) {
		t.Errorf("%d arcs counted in the target, want %d", len(a.jump.arcs), len(w.jump.arcs))
	}
}

// arcsAt describes the arcs site i's trampoline counts, in order.
func arcsAt(t *Table, i int) []string {
	var out []string
	for _, k := range t.jump.arcOf[i] {
		ac := t.jump.arcs[k]
		out = append(out, fmt.Sprintf("edge %d taken %v table %#x len %d short %v", ac.edge, ac.taken, ac.table, ac.length, ac.short))
	}
	return out
}

// entryOfSlot returns the entry site whose slots site i's check uses.
func entryOfSlot(t *Table, i int) int {
	return t.jump.calls.entries[t.jump.calls.slot[i]]
}
