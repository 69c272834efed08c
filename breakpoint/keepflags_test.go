package breakpoint

import (
	"testing"

	"github.com/patchprof/patchprof/breakpoint/jump"
)

// keepSource has a function whose entry runs on to a variable rotate,
// which leaves the flags alone when the count is 0: the reading of the
// flags does not know them dead there.
const keepSource = `unsigned rot(unsigned x, unsigned n) { return (x << n) | (x >> (32 - n)); }
int main(int argc, char **argv) { return (int)rot(argc, 3) & 1; }
`

// TestPlanKeepFlags: a site where the flags are live counts in the target
// with the update that keeps them, in C; in a Go program, where only a
// function with Go's stack check may use the stack below SP, the same
// site keeps its breakpoint.
func TestPlanKeepFlags(t *testing.T) {
	sym, lt := buildSource(t, "rot.c", keepSource, "-O0")
	addrOf := map[string]uint64{}
	for _, f := range sym.Funcs {
		addrOf[f.Name] = f.Addr
	}
	for _, goProgram := range []bool{false, true} {
		po := PlanOptions{Funcs: true, GoPrologue: goProgram}
		p := NewPlan(sym, lt, po)
		p.PlanJumps(sym, po)
		tab := p.Table
		rot, ok := tab.Index(addrOf["rot"])
		if !ok {
			t.Fatal("no site at rot's entry")
		}
		if goProgram {
			if r := tab.KeptReason(rot); r != JumpFlagsLive || tab.KeepFlags(rot) {
				t.Errorf("as in a Go program: rot's entry keeps its breakpoint for %q (KeepFlags %v), want %q", r, tab.KeepFlags(rot), JumpFlagsLive)
			}
			continue
		}
		if r := tab.KeptReason(rot); r != "" || tab.JumpLen(rot) == 0 || !tab.KeepFlags(rot) {
			t.Fatalf("rot's entry: reason %q, jump length %d, KeepFlags %v; want a jump that keeps the flags", r, tab.JumpLen(rot), tab.KeepFlags(rot))
		}
		if m, ok := tab.Index(addrOf["main"]); !ok || tab.JumpLen(m) == 0 || tab.KeepFlags(m) {
			t.Errorf("main's entry, whose flags are dead: KeepFlags %v, want the plain add", tab.KeepFlags(m))
		}
		code, _ := sym.Code(addrOf["rot"], 64)
		const at = 0x7f0000
		tr, err := tab.BuildTrampoline(rot, code, at, 8, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, p := tr.Where(at + 5); p != jump.InCount {
			t.Errorf("rot's trampoline at +5 is %v, want inside the update that keeps the flags: % x", p, tr.Code)
		}
	}
}
