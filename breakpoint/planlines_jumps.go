package breakpoint

import (
	"regexp"
	"sort"
	"strings"

	"github.com/patchprof/patchprof/cfg"
)

// jumpStmt matches a statement that is only a jump: GCC makes it a goto
// (a void function's `return;` one to its shared return), which ends the
// block of the statements before it.
var jumpStmt = regexp.MustCompile(`^(break|continue|return)\s*;|^goto\s+\w+\s*;`)

// emptyStmt matches a source line that holds no statement GCC emits code
// or a location for: a comment, or a macro call that expands to nothing
// (assert under NDEBUG, SQLite's testcase).
var emptyStmt = regexp.MustCompile(`^(/\*|\*|//|$)|^\w+\s*\(.*\)\s*;\s*(/\*.*\*/|//.*)?$`)

// leavesStmt matches a statement that leaves: code after it is dead, and
// GCC has no location for a jump written there.
var leavesStmt = regexp.MustCompile(`^(break|continue|return|goto)\b`)

// endsStmt reports whether a source line ends a statement that goes on to
// the next one: it ends with a semicolon (a jmp inside an expression, a
// conditional operator's, ends no statement) and is not itself a jump.
func endsStmt(line string) bool {
	t := strings.TrimSpace(line)
	if i := strings.Index(t, "/*"); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	if i := strings.Index(t, "//"); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	return strings.HasSuffix(t, ";") && !leavesStmt.MatchString(t)
}

// addMergedJumps gives a block that ends in a jmp sharing the row of the
// statement before it the line of the jump statement written there (a
// break, continue or goto right after that statement); so too a block
// that falls (or a call returns) into the jump's target, where -O0 left
// out a jmp to the next instruction. GCC puts the goto
// on the block's outgoing arc (its goto_locus), which gcov counts as a
// line of the block, and -O0 emits the jmp under the previous statement's
// row when that arc is not expanded on its own. The statement before must
// end on the jmp's row (endsStmt).
func (p *Plan) addMergedJumps(m *lineModel, g *cfg.Graph, mf *modelFunc, rs []fnRow, fi int, keepFile func(string) bool, source func(string) ([]string, bool)) {
	rowed := map[LineRef]bool{}
	for _, r := range rs {
		rowed[r.ref] = true
	}
	for b, bl := range g.Blocks {
		ls := mf.blocks[b]
		if bl.Term != cfg.TermJump && bl.Term != cfg.TermFall && bl.Term != cfg.TermCall || len(ls) == 0 {
			continue
		}
		// The row the jmp is in.
		k := sort.Search(len(rs), func(k int) bool { return rs[k].addr > bl.Last }) - 1
		if k < 0 || rs[k].drop {
			continue
		}
		last := rs[k].ref
		if m.keys[ls[len(ls)-1].line] != last {
			continue
		}
		// After a call, the code the call returns to may still be the
		// statement's (storing its result, the jmp): the jump is that
		// block's.
		if bl.Term == cfg.TermCall {
			j := sort.Search(len(rs), func(j int) bool { return rs[j].addr > bl.End }) - 1
			if j >= 0 && rs[j].ref == last {
				continue
			}
		}
		src, ok := source(last.File)
		if !ok || last.Line < 1 || last.Line > len(src) || !endsStmt(src[last.Line-1]) {
			continue
		}
		for l := last.Line + 1; l <= len(src) && l-last.Line <= 16; l++ {
			ref := LineRef{File: last.File, Line: l}
			if rowed[ref] {
				break
			}
			text := strings.TrimSpace(src[l-1])
			if jumpStmt.MatchString(text) {
				at := lineAt{line: p.modelKey(m, ref, fi, keepFile), addr: bl.Last}
				mf.blocks[b] = append(ls, at)
				break
			}
			if !emptyStmt.MatchString(text) {
				break
			}
		}
	}
}
