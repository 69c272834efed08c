package breakpoint

import (
	"bytes"
	"testing"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
)

// rotatedLoop is a loop entered by one test and closed by another, two
// conditional jumps to the same two blocks: breakpoint/jump/edgecount_test.go
// has it instruction by instruction.
var rotatedLoop = []byte{0x85, 0xff, 0x7e, 0x07, 0x48, 0xff, 0xc0, 0xff, 0xcf, 0x75, 0xf9, 0xc3}

// rotatedTable is a table of the rotated loop's blocks, planned as
// PlanJumps plans it once the back edge is counted: arc counter 0 at
// block B's site.
func rotatedTable(t *testing.T) (*Table, int) {
	t.Helper()
	g, err := cfg.Build(cfg.Options{Name: "rotated", Addr: 0x1000, Code: rotatedLoop, SplitCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	var specs []SiteSpec
	for k, b := range g.Blocks {
		specs = append(specs, SiteSpec{Addr: b.Start, Kind: KindBlock, Entry: k == 0, Block: int32(k)})
	}
	tab := NewTable(specs, 0)
	if err := tab.SetBlocks([]FuncGraph{{Graph: g, Entry: g.Addr, Tail: g.End}}); err != nil {
		t.Fatal(err)
	}
	back := -1
	for k, e := range g.Edges {
		if e.Target == 0x1004 && e.Kind == cfg.Taken {
			back = k
		}
	}
	site, _ := tab.Index(0x1004)
	tab.jump = &jumpInfo{length: make([]uint8, tab.Len()), derived: make([]bool, tab.Len()), arcOf: map[int][]int{}}
	p := &Plan{Table: tab, Graphs: tab.Graphs()}
	arcs := map[int][]arcCounter{0: {{site: site, graph: 0, edge: back, taken: true, length: 7}}}
	tab.jump.derive = []*jump.DerivePlan{nil}
	tab.jump.measured = make([][]bool, 1)
	measured := make([]bool, len(g.Edges))
	measured[back] = true
	tab.jump.derive[0], _ = jump.NewFlow(g, measured).Solve(nil)
	p.keepArcs(nil, arcs, make([]string, tab.Len()))
	return tab, back
}

// TestDeriveFlowArcs: DeriveFlow reads the counted arc and derives the
// others; an arc whose site never took its patch, in a block that ran,
// leaves the function underived and says so (ArcsLost).
func TestDeriveFlowArcs(t *testing.T) {
	tab, back := rotatedTable(t)
	for i, c := range []uint64{10, 25, 10} {
		tab.cnt.Hits[i] = c
	}
	tab.cnt.ArcHits[0] = 18
	tab.ArcServed(0)
	if bad, lost := tab.DeriveFlow(tab.cnt, nil); bad != 0 || lost != 0 {
		t.Fatalf("DeriveFlow: %d inconsistent, %d lost", bad, lost)
	}
	edges, arr := counts(tab, 0)
	if edges[back] != 18 || arr[0] != 10 {
		t.Errorf("edges %v arrivals %v: want the back edge 18, 10 entries", edges, arr)
	}
	var sum uint64
	for _, e := range edges {
		sum += e
	}
	if sum != 3+7+18+7 {
		t.Errorf("edges %v, want 3, 7, 18 and 7", edges)
	}

	tab, _ = rotatedTable(t)
	tab.cnt.Hits[1] = 25 // B ran, and its arc was never counted in the target
	if bad, lost := tab.DeriveFlow(tab.cnt, nil); bad != 1 || lost != 1 {
		t.Errorf("an uncounted arc: %d inconsistent, %d lost; want 1 and 1", bad, lost)
	}
	tab, _ = rotatedTable(t)
	tab.cnt.Hits[0] = 4 // only A ran: the arc's block never did, its count is 0
	if bad, lost := tab.DeriveFlow(tab.cnt, nil); bad != 0 || lost != 0 {
		t.Errorf("an arc whose block never ran: %d inconsistent, %d lost; want none", bad, lost)
	}
}

// shortArcSource is the -O2 shape of TinyXML-2's XMLNode::ParseDeep and of
// Jim Tcl's JimSearchList: the result of each of two calls is tested in a
// block of its own, `test %eax, %eax; jne` (4 bytes), and both tests go
// to the same two blocks, which leaves an arc free. gcc 12 -O2:
//
//	pick:  imul; cmp; ja 1f
//	       call odd
//	       test %eax, %eax; jne 2f
//	3:     mov %edi, sink; lea (%rdi,%rdi), %eax; ret
//	1:     call big
//	       test %eax, %eax; je 3b
//	2:     lea 1(%rdi), %eax; ret
const shortArcSource = `static volatile int sink;
__attribute__((noinline)) static int odd(int x) { sink = x; return x & 1; }
__attribute__((noinline)) static int big(int x) { sink = x; return x > 50; }
__attribute__((noinline)) static int pick(int i)
{
  int r;
  if (i % 3 == 0)
    r = odd(i);
  else
    r = big(i);
  if (r)
    return i + 1;
  sink = i;
  return 2 * i;
}
int main(void) { long s = 0; for (int i = 0; i < 100; i++) s += pick(i); return (int)(s & 1); }
`

// TestPlanShortArc: an arc of a block too short for a jmp rel32 is counted
// by a short site's trampoline, which runs the whole block: pick's sites
// take jumps, none keeps its breakpoint for its edges, and the arc's
// trampoline counts it through the relocated conditional jump.
func TestPlanShortArc(t *testing.T) {
	sym, p, fg := planSourceFunc(t, "pick.c", shortArcSource, "-O2", "pick")
	tab := p.Table
	if _, ok := jump.PlanDerive(fg.Graph, nil); ok {
		t.Skip("gcc compiled pick with edges that follow from its blocks")
	}
	var arcSite []int
	for i := 0; i < tab.Len(); i++ {
		a := tab.Addr(i)
		if a < fg.Graph.Addr || a >= fg.Graph.End {
			continue
		}
		if r := tab.KeptReason(i); r != "" {
			t.Errorf("pick's site at %#x keeps its breakpoint: %s", a, r)
		}
		if ks, _ := tab.ArcsOf(i); len(ks) > 0 {
			arcSite = append(arcSite, i)
		}
	}
	if len(arcSite) != 1 {
		t.Fatalf("pick counts arcs at sites %v, want one", arcSite)
	}
	i := arcSite[0]
	b, ok := jump.BlockAt(fg.Graph, tab.Addr(i))
	host, short := tab.ShortSite(i)
	if !ok || !short || b.End-b.Start >= jump.JmpLen || tab.JumpLen(i) != int(b.End-b.Start) {
		t.Fatalf("arc site %#x: short %v, jump length %d; want a short site displacing its whole block (%d bytes)",
			tab.Addr(i), short, tab.JumpLen(i), b.End-b.Start)
	}
	code, _ := sym.Code(tab.Addr(i), 16)
	_, ecs := tab.ArcsOf(i)
	ecs[0].Counter = 0x40
	const at = 0x7f0000
	tr, err := tab.BuildTrampoline(i, code, at, 8, ecs)
	if err != nil {
		t.Fatalf("the arc's trampoline: %v", err)
	}
	if err := tr.SetShort(tab.Addr(host) + jump.JmpLen); err != nil {
		t.Fatalf("the arc's short patch to host %#x: %v", tab.Addr(host), err)
	}
	if !bytes.Contains(tr.Code, []byte{0x65, 0x48, 0x83, 0x04, 0x25, 0x40, 0, 0, 0, 0x01}) {
		t.Errorf("the arc's trampoline has no update of its counter (addq $1, %%gs:0x40): % x", tr.Code)
	}
}

// planSourceFunc builds source (named name) with gcc opt, plans its lines
// and entries with their jumps, and returns the plan and the flow graph
// of function fn, which it must have.
func planSourceFunc(t *testing.T, name, source, opt, fn string) (*symtab.File, *Plan, FuncGraph) {
	t.Helper()
	sym, lt := buildSource(t, name, source, opt)
	po := PlanOptions{Lines: true, Funcs: true}
	p := NewPlan(sym, lt, po)
	p.PlanJumps(sym, po)
	for _, g := range p.Graphs {
		if sym.Funcs[g.Func].Name == fn {
			return sym, p, g
		}
	}
	t.Fatalf("no flow graph of %s", fn)
	return nil, nil, FuncGraph{}
}
