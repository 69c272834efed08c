package breakpoint

import (
	"fmt"
	"reflect"
	"testing"
)

// TestNewPlanJumpsBesideModel checks that planning the jumps beside the line
// model (PlanOptions.Jumps) gives exactly the plan of the sequential order,
// NewPlan then PlanJumps: the same lines in the same order, each site with
// the same lines, the same jump plan, site by site. With RowSites every
// line is numbered late (pendingLines); without, the model numbers its own.
// With ModelAfter the model is built beside the caller, and the same
// plan is there once Wait returns.
func TestNewPlanJumpsBesideModel(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		tg := buildTarget(t, opt)
		for _, c := range []struct{ rows, after bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			rows := c.rows
			t.Run(fmt.Sprintf("%s/rowsites=%v/modelafter=%v", opt, rows, c.after), func(t *testing.T) {
				po := PlanOptions{Lines: true, Funcs: true, Blocks: true, RowSites: rows}
				seq := NewPlan(tg.sym, tg.lt, po)
				want := seq.PlanJumps(tg.sym, po)
				po.Jumps, po.ModelAfter = true, c.after
				got := NewPlan(tg.sym, tg.lt, po)
				got.Wait()
				if !reflect.DeepEqual(got.Lines, seq.Lines) || !reflect.DeepEqual(got.LineFuncs, seq.LineFuncs) {
					t.Fatalf("lines differ: %d beside the model, %d in order", len(got.Lines), len(seq.Lines))
				}
				if len(got.Lines) == 0 || got.Table.Len() != seq.Table.Len() {
					t.Fatalf("%d lines, %d and %d sites", len(got.Lines), got.Table.Len(), seq.Table.Len())
				}
				if len(got.Table.cnt.LineEntries) != len(seq.Table.cnt.LineEntries) {
					t.Errorf("LineEntries: %d, want %d", len(got.Table.cnt.LineEntries), len(seq.Table.cnt.LineEntries))
				}
				for i := range got.Table.Len() {
					if !reflect.DeepEqual(got.Table.Lines(i), seq.Table.Lines(i)) || !reflect.DeepEqual(got.SiteLines(i), seq.SiteLines(i)) {
						t.Errorf("site %#x: lines %v (%v), want %v (%v)", got.Table.Addr(i), got.Table.Lines(i), got.SiteLines(i), seq.Table.Lines(i), seq.SiteLines(i))
					}
					if got.Table.JumpLen(i) != seq.Table.JumpLen(i) || got.Table.Derived(i) != seq.Table.Derived(i) {
						t.Errorf("site %#x: jump %d derived %v, want %d %v", got.Table.Addr(i),
							got.Table.JumpLen(i), got.Table.Derived(i), seq.Table.JumpLen(i), seq.Table.Derived(i))
					}
				}
				// Every site's lines are its rows' (the late numbering maps
				// each provisional number to its own line), and without the
				// model the lines are numbered in the order of the rows.
				var order []LineRef
				seen := map[LineRef]bool{}
				for _, r := range tg.lt.Rows {
					i, ok := got.Table.Index(r.Addr)
					if !ok || got.Table.Kind(i)&KindLine == 0 {
						continue
					}
					ref := LineRef{File: tg.lt.Files[r.File], Line: int(r.Line)}
					found := false
					for _, l := range got.SiteLines(i) {
						found = found || got.Lines[l] == ref
					}
					if !found {
						t.Errorf("site %#x: no line %v among %v", r.Addr, ref, got.SiteLines(i))
					}
					if !seen[ref] {
						seen[ref] = true
						order = append(order, ref)
					}
				}
				if rows && !reflect.DeepEqual(got.Lines, order) {
					t.Errorf("lines numbered out of the rows' order")
				}
				if !reflect.DeepEqual(got.Jumps, want) || want.Sites == 0 {
					t.Errorf("jump plan %+v, want %+v", got.Jumps, want)
				}
			})
		}
	}
}
