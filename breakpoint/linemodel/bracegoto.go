package linemodel

import (
	"strings"

	"github.com/patchprof/patchprof/cfg"
)

// The jump past an else located at a C++ then block's closing brace.
//
// An if whose condition is an && or || is gimplified by shortcut_cond_expr
// (gimplify.cc), which, unlike gimplify_cond_expr's, gives the goto from
// the end of the then branch past the else the location of the branch
// (rexpr_location of then_). g++ makes every compound statement a
// BIND_EXPR located at its closing brace, so that goto is a statement of
// the brace's line, and it begins a block of GCC's wherever the branch
// ends in a join (its last statement an if or a loop): every way through
// the branch to its end runs through it, and gcov counts the brace once
// per pass through the branch. -O0 emits the jmp under the brace's row
// in the block of the branch's last statement and sends the branch's
// other ends straight to the jmp's target. The model makes the brace's
// line a block of GCC's with no code on every arc from inside the branch
// to that target, the jmp's own arc included.

// braceElse matches the code text of a line that closes a block, alone or
// before an else.
var braceElse = lazyRE(`^\}\s*(else\b.*)?$`)

// addBraceGotos finds, in a C++ function, each block ending in a forward
// jmp whose own row names a then block's closing brace (braceElse, an
// else after it), and routes the arcs that leave the branch for the jmp's
// target through a labelBlock of the brace's line (see above). A branch
// with a continue or goto, whose jumps may reach the same target by
// other paths of GCC's, is left alone.
func (m *Model) addBraceGotos(g *cfg.Graph, mf *modelFunc, source func(string) ([]string, bool)) {
	claimed := make(map[int]bool)
	for _, lb := range mf.labels {
		for _, k := range lb.edges {
			claimed[k] = true
		}
	}
	for b := range g.Blocks {
		bl := &g.Blocks[b]
		ls := mf.blocks[b]
		n := len(ls)
		if bl.Term != cfg.TermJump || n == 0 || mf.skip[b] || ls[n-1].addr != bl.Last {
			continue
		}
		succ := g.Succs(b)
		if len(succ) != 1 || succ[0].To < 0 || succ[0].Target <= bl.Last || claimed[g.SuccIndex(b)] {
			continue
		}
		brace := m.keys[ls[n-1].line]
		src, ok := source(brace.File)
		if !ok || brace.Line < 2 || brace.Line > len(src) {
			continue
		}
		open, ok := thenBlock(src, brace.Line)
		if !ok {
			continue
		}
		edges := []int{g.SuccIndex(b)}
		for k, e := range g.Edges {
			if e.To != succ[0].To || e.From == b || e.From < 0 || claimed[k] || e.Kind == cfg.Return {
				continue
			}
			if m.insideBranch(mf, e.From, brace.File, open, brace.Line, src) {
				edges = append(edges, k)
			}
		}
		for _, k := range edges {
			claimed[k] = true
		}
		mf.blocks[b] = ls[:n-1]
		mf.labels = append(mf.labels, labelBlock{lines: []int32{ls[n-1].line}, edges: edges})
	}
}

// thenBlock reports whether line close of src closes a then block
// (braceElse, and an else on it or on the next line with code) that holds
// no continue or goto, and returns the line of its opening brace.
func thenBlock(src []string, close int) (int, bool) {
	comment := false
	t := strings.TrimSpace(codeText(src[close-1], &comment))
	if !braceElse.MatchString(t) {
		return 0, false
	}
	if !strings.Contains(t, "else") {
		next := ""
		for l := close + 1; l <= len(src) && l <= close+5 && next == ""; l++ {
			next = strings.TrimSpace(codeText(src[l-1], &comment))
		}
		if wordAt(next, 0) != "else" {
			return 0, false
		}
	}
	open, _ := openerAbove(src, close, 400)
	if open == 0 {
		return 0, false
	}
	comment = false
	for l := open; l < close; l++ {
		text := codeText(src[l-1], &comment)
		for _, w := range [...]string{"continue", "goto"} {
			if i := strings.Index(text, w); i >= 0 && wordAt(text, i) == w {
				return 0, false
			}
		}
	}
	return open, true
}

// insideBranch reports whether block b (not skipped, with lines) lies in
// the then branch whose braces are on lines open and close of file, and
// does not end in a jump statement of its own (a break or return leaves
// by another path of GCC's).
func (m *Model) insideBranch(mf *modelFunc, b int, file string, open, close int, src []string) bool {
	ls := mf.blocks[b]
	if mf.skip[b] || len(ls) == 0 {
		return false
	}
	for _, x := range ls {
		if r := m.keys[x.line]; r.File != file || r.Line <= open || r.Line > close {
			return false
		}
	}
	last := m.keys[ls[len(ls)-1].line].Line
	return !jumpStmt.MatchString(strings.TrimSpace(src[last-1]))
}
