package jump

import (
	"math/rand/v2"
	"testing"

	"github.com/patchprof/patchprof/cfg"
)

// randomGraph returns a flow graph of up to 14 blocks with random
// terminators, landing pads and edges (some leaving the function), and a
// random choice of measured edges (nil for none).
func randomGraph(r *rand.Rand) (*cfg.Graph, []bool) {
	terms := []cfg.Term{cfg.TermFall, cfg.TermJump, cfg.TermCond, cfg.TermTable, cfg.TermReturn, cfg.TermNoReturn, cfg.TermTrap}
	nb := 1 + r.IntN(14)
	g := &cfg.Graph{Blocks: make([]cfg.Block, nb)}
	for b := range g.Blocks {
		g.Blocks[b] = cfg.Block{Start: uint64(0x1000 + 16*b), End: uint64(0x1010 + 16*b), Term: terms[r.IntN(len(terms))], Landing: b > 0 && r.IntN(8) == 0}
	}
	ne := r.IntN(2*nb + 2)
	for range ne {
		to := r.IntN(nb+1) - 1
		g.Edges = append(g.Edges, cfg.Edge{From: r.IntN(nb), To: to})
	}
	var measured []bool
	if r.IntN(3) == 0 {
		measured = make([]bool, len(g.Edges))
		for k := range measured {
			measured[k] = r.IntN(3) == 0
		}
	}
	return g, measured
}

// TestGrowMatchesSolve checks the union-find growth against a solve of
// the whole flow for every choice: deriving candidates one at a time in a
// random order, each kept exactly when Solvable says the flow still
// follows with it, on random graphs and random first choices.
func TestGrowMatchesSolve(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	grown, kept := 0, 0
	for n := 0; n < 20000; n++ {
		g, measured := randomGraph(r)
		fs := NewFlow(g, measured)
		derived := make([]bool, len(g.Blocks))
		for b := range derived {
			derived[b] = r.IntN(4) == 0
		}
		gr, ok := fs.Grow(derived)
		if want := fs.Solvable(derived); ok != want {
			t.Fatalf("graph %d %+v edges %+v measured %v derived %v: Grow %v, Solvable %v", n, g.Blocks, g.Edges, measured, derived, ok, want)
		}
		if !ok {
			continue
		}
		grown++
		for _, b := range r.Perm(len(g.Blocks)) {
			if derived[b] {
				continue
			}
			derived[b] = true
			want := fs.Solvable(derived)
			if got := gr.Derive(b); got != want {
				t.Fatalf("graph %d %+v edges %+v measured %v: deriving block %d with %v: Derive %v, Solvable %v", n, g.Blocks, g.Edges, measured, b, derived, got, want)
			}
			if !want {
				derived[b] = false
				continue
			}
			kept++
		}
	}
	if grown < 1000 || kept < 1000 {
		t.Fatalf("only %d solvable graphs and %d derived blocks: the test tries too little", grown, kept)
	}
}

// TestGrowPointerTail: a block that leaves through a pointer is in no
// conserved equation, so its count never follows (TestDerivePointerTail).
func TestGrowPointerTail(t *testing.T) {
	g, err := cfg.Build(cfg.Options{Name: "pointerTail", Addr: 0x1000, Code: pointerTail, SplitCalls: true})
	if err != nil {
		t.Fatal(err)
	}
	fs := NewFlow(g, nil)
	gr, ok := fs.Grow(nil)
	if !ok {
		t.Fatal("the flow does not follow with every block counted")
	}
	if gr.Derive(1) {
		t.Error("the pointer tail's block derives from the entry's count")
	}
	if gr.Derive(0) != fs.Solvable([]bool{true, false}) {
		t.Error("the entry block: Derive and Solvable disagree")
	}
}
