package linemodel

import (
	"strings"

	"github.com/patchprof/patchprof/cfg"
)

// A label last in its switch with nothing after it (trailingLabel: a
// default whose assert is compiled out) shares GCC's block with the
// switch's end. When the switch is the last statement of a scope whose
// variables end with clobbers (finally.go), that block holds the
// clobbers of the scope's fall-through end and is no forwarder, so it is
// a block of its own: the switch's arcs enter it (the dispatch's, the
// breaks, the last case falling off), while the scope's other exits (a
// return above the switch) run through copies of their own. -O0 emits no
// code for it: the dispatch, the breaks and the return all jump to the
// same epilogue, and the model makes the label a block on the switch's
// arcs into it. (Without clobbers the end block is a forwarder GCC
// removes, and the label goes with the block after it.)

// addClobberedEnds adds the label block of each switch of the function
// whose last label is trailing and whose end is a scope's end with
// clobbers. mem is the function's locals in memory.
func (m *Model) addClobberedEnds(g *cfg.Graph, mf *modelFunc, rs []fnRow, mem inMemory, fi int, source func(string) ([]string, bool)) {
	file, src, ok := funcSource(rs, source)
	if !ok {
		return
	}
	lo, hi, lineAt := rowSpan(rs, file)
	firstAt := make(map[LineRef]uint64, len(lineAt))
	for l, a := range lineAt {
		firstAt[LineRef{File: file, Line: l}] = a
	}
	var all []scope
	done := map[int]bool{}
	for b := range g.Blocks {
		sw := m.switchOf(mf, b, file, src)
		if sw == 0 || done[sw] {
			continue
		}
		done[sw] = true
		cases, close := switchCases(src, sw, nil, nil)
		if close == 0 || len(cases) == 0 || !trailingLabel(src, cases[len(cases)-1].label, file, firstAt) {
			continue
		}
		if all == nil {
			all = scopesOf(m.text(src), lo, hi)
		}
		if !endsClobbered(src, all, close, mem) {
			continue
		}
		if edges := m.switchEndArcs(g, mf, file, src, sw, close); len(edges) > 0 {
			key := m.lineKey(LineRef{File: file, Line: cases[len(cases)-1].label}, fi)
			mf.labels = append(mf.labels, labelBlock{lines: []int32{key}, edges: edges})
		}
	}
}

// switchOf returns the line of the switch whose dispatch block b is (its
// last line is a switch statement's), 0 when it is none.
func (m *Model) switchOf(mf *modelFunc, b int, file string, src []string) int {
	ls := mf.blocks[b]
	if len(ls) == 0 {
		return 0
	}
	ref := m.keys[ls[len(ls)-1].line]
	if ref.File != file || ref.Line < 1 || ref.Line > len(src) || !switchLine.MatchString(strings.TrimSpace(src[ref.Line-1])) {
		return 0
	}
	return ref.Line
}

// endsClobbered reports whether the statement after the switch that
// closes at line close is the end of a scope of all whose variables end
// with clobbers (they live in memory, or their address is taken).
func endsClobbered(src []string, all []scope, close int, mem inMemory) bool {
	comment := false
	end := 0
	for l := close + 1; l <= len(src) && l <= close+16; l++ {
		t := strings.TrimSpace(codeText(src[l-1], &comment))
		if t == "" {
			continue
		}
		if closeBrace.MatchString(t) {
			end = l
		}
		break
	}
	if end == 0 {
		return false
	}
	for _, s := range all {
		if s.close == end && s.kind != "switch" {
			return mem.declares(s) || takesAddress(s, func(l int) string {
				c := false
				return strings.TrimSpace(codeText(src[l-1], &c))
			})
		}
	}
	return false
}

// switchEndArcs returns the arcs of the switch on line sw (closing at
// line close) into the block its end shares with its dispatch's values
// no case names: from the dispatch and from the blocks of its body.
func (m *Model) switchEndArcs(g *cfg.Graph, mf *modelFunc, file string, src []string, sw, close int) []int {
	// The end: where the dispatch goes outside the switch's body.
	end := -1
	for _, e := range g.Edges {
		if e.From < 0 || e.To < 0 || m.switchOf(mf, e.From, file, src) != sw {
			continue
		}
		if ls := mf.blocks[e.To]; len(ls) == 0 || m.outside(ls[0].line, file, sw, close) {
			end = e.To
			break
		}
	}
	if end < 0 {
		return nil
	}
	var edges []int
	for _, k := range mf.predsOf(g)[end] {
		e := g.Edges[k]
		if e.From < 0 {
			continue
		}
		ls := mf.blocks[e.From]
		if len(ls) > 0 && (m.switchOf(mf, e.From, file, src) == sw || !m.outside(ls[len(ls)-1].line, file, sw, close)) {
			edges = append(edges, int(k))
		}
	}
	return edges
}

// outside reports whether model key k is a line outside lines sw to
// close of file.
func (m *Model) outside(k int32, file string, sw, close int) bool {
	ref := m.keys[k]
	return ref.File != file || ref.Line < sw || ref.Line > close
}
