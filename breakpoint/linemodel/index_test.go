package linemodel

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/cfg"
)

// indexSource is lines the index must read as the rules' own readers do:
// comments running across lines, literals, spaces of every kind.
var indexSource = []string{
	"int f(int x) {",
	"\t/* a comment",
	"   running on */ x++; // and one to the end",
	"  s = \"a /* not */ string\\\" still\"; c = '\\'';",
	"\v\f case 1:  /* c */ \u00a0",
	"",
	"   ",
	"out: x = 0; /* opens",
	"*/ goto out;",
	"  { done: ; }",
	"}",
}

// TestSrcTextReadsAsCodeText checks that the index gives what codeText,
// strings.TrimSpace and isCaseLabel give, from either side of a comment,
// asked once or again, in any order.
func TestSrcTextReadsAsCodeText(t *testing.T) {
	tx := newSrcText(indexSource)
	for pass := range 2 {
		for _, start := range []bool{false, true} {
			want, got := start, start
			for l := len(indexSource); l >= 1; l-- { // backwards, as openerAbove reads
				w := codeText(indexSource[l-1], &want)
				c, tr := tx.code(l, &got)
				if c != w || tr != strings.TrimSpace(w) || got != want {
					t.Fatalf("pass %d, line %d from %v: code %q %q %v, want %q %q %v", pass, l, start, c, tr, got, w, strings.TrimSpace(w), want)
				}
				if tx.trim(l) != strings.TrimSpace(indexSource[l-1]) || tx.isCaseLabel(l) != isCaseLabel(strings.TrimSpace(indexSource[l-1])) {
					t.Fatalf("line %d: trim %q, case label %v", l, tx.trim(l), tx.isCaseLabel(l))
				}
			}
		}
	}
}

// TestLabelLines checks labelLines against labelsAt line by line.
func TestLabelLines(t *testing.T) {
	at := func(l int) string { return strings.TrimSpace(indexSource[l-1]) }
	labeled := labelLines(at, 1, len(indexSource))
	for _, label := range []string{"out", "done", "case", "x", "nowhere"} {
		for from := 1; from <= len(indexSource); from++ {
			for to := from; to <= len(indexSource); to++ {
				want := false
				for l := from; l <= to; l++ {
					want = want || labelsAt(at(l), label)
				}
				if got := labeled(label, from, to); got != want {
					t.Errorf("labeled(%q, %d, %d) = %v, want %v", label, from, to, got, want)
				}
			}
		}
	}
}

// TestPredEdges checks the arcs into each block against a scan of all
// edges, and mergeEdges' order.
func TestPredEdges(t *testing.T) {
	g := &cfg.Graph{
		Blocks: make([]cfg.Block, 4),
		Edges:  []cfg.Edge{{From: -1, To: 0}, {From: 0, To: 1}, {From: 0, To: 2}, {From: 1, To: 3}, {From: 2, To: 3}, {From: 3, To: 1}, {From: 3, To: -1}},
	}
	ins := predEdges(g)
	for b := range g.Blocks {
		var want []int32
		for k, e := range g.Edges {
			if e.To == b {
				want = append(want, int32(k))
			}
		}
		if !slices.Equal(ins[b], want) {
			t.Errorf("block %d: arcs in %v, want %v", b, ins[b], want)
		}
	}
	if got := fmt.Sprint(mergeEdges(ins[1], ins[3])); got != "[1 3 4 5]" {
		t.Errorf("mergeEdges = %s, want [1 3 4 5]", got)
	}
}
