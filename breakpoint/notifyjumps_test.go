package breakpoint

import "testing"

// TestPlanJumpsNotifyOnly: a module planted only for the dynamic linker's
// notification point (ld.so, read at every start) keeps its breakpoint
// there and is not decoded for branch targets, which only a site that may
// take a jump needs (issue 28); a module with counted functions is.
func TestPlanJumpsNotifyOnly(t *testing.T) {
	tg := buildTarget(t, "-O0")
	notify := tg.sym.Funcs[tg.funcIndex(t, "main")].Addr
	p := NewPlan(tg.sym, nil, PlanOptions{Notify: []uint64{notify}, Jumps: true})
	if p.Table.Len() != 1 || !p.Table.IsNotify(0) {
		t.Fatalf("table of %d sites, want the notification point alone", p.Table.Len())
	}
	if p.Jumps.Sites != 0 || p.Jumps.Reasons[JumpNotify] != 1 {
		t.Errorf("jump plan %+v: want the notification point to keep its breakpoint", p.Jumps)
	}
	if p.targets != nil {
		t.Errorf("branch targets computed (%d) for a module with no site that may jump", p.targets.Len())
	}
	p = NewPlan(tg.sym, nil, PlanOptions{Funcs: true, Notify: []uint64{notify}, Jumps: true})
	if p.targets == nil {
		t.Error("no branch targets for a module with counted functions")
	}
}
