package linemodel

import (
	"regexp"
	"strings"

	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/lineinfo"
)

// At -O0 GCC never merges a block that starts at a user's goto label into
// the block before it (gimple_can_merge_blocks_p keeps every user label).
// When the statement after the label starts a block of its own, behind a
// label of GCC's (the body of a loop with no condition or init at its
// top, the join of an if compiled to nothing), the user's label is a
// block of GCC's with no statement but itself, and gcov counts every arc
// into it on the label's line: the code above falling in and the gotos,
// not a loop's back edges, which go to the loop's own label, nor a
// switch's arcs, which go to a case label after it: a label starts a
// block unless the label before it is GCC's (stmt_starts_bb_p), so a case
// label after the user's, written there or by a macro (a state machine's
// GET_BITS), is a block of its own. -O0 emits no
// code for it, and DW_TAG_label may even name the nop that holds a
// goto's location (its goto_locus) on the way there. The model makes
// such a label a block of its own on the arcs into its destination from
// the code above it and from gotos naming it. (A label merged with the
// statements after it stays a line of their block.)

// A labelBlock is a block of GCC's with no code on some of the graph's
// arcs (indices into its edges): a goto label's, or a folded jump's
// (addFoldedJumps).
type labelBlock struct {
	lines []int32 // model keys
	edges []int
}

// labelName captures the name of a goto label alone on its line.
var labelName = lazyRE(`^([A-Za-z_]\w*)\s*:`)

// addLabelBlocks takes each goto label of the function off the block its
// address starts and makes it a labelBlock (see above). nops tells the
// one-byte nops of the function's code.
func addLabelBlocks(m *Model, g *cfg.Graph, mf *modelFunc, labels []lineinfo.Label, rs []fnRow, nops nopAt, source func(string) ([]string, bool)) {
	rowed := map[LineRef]bool{}
	for _, r := range rs {
		rowed[r.ref] = true
	}
	for _, lb := range labels {
		key, ok := m.keyOf(LineRef{File: lb.File, Line: lb.Line})
		src, okSrc := source(lb.File)
		if !ok || !okSrc || lb.Line < 1 || lb.Line > len(src) {
			continue
		}
		name := labelName.FindStringSubmatch(strings.TrimSpace(src[lb.Line-1]))
		b, ok := g.BlockAt(lb.Addr)
		if name == nil || !ok || g.Blocks[b].Start != lb.Addr {
			continue
		}
		d := labelDest(g, b, nops)
		caseNext := m.caseAfter(lb.File, src, lb.Line)
		if d < 0 || !caseNext && !ownLabelBlock(src, lb.Line, func(l int) bool { return rowed[LineRef{File: lb.File, Line: l}] }) {
			continue
		}
		goes := regexp.MustCompile(`\bgoto\s+` + name[1] + `\s*;`)
		var edges []int
		for k, e := range g.Edges {
			if e.To != d || e.From < 0 || caseNext && isDispatch(m, mf, g, e, source) {
				continue
			}
			from := mf.blocks[e.From]
			if g.Blocks[e.From].Start < g.Blocks[d].Start || len(from) > 0 && jumpsWith(m, from[len(from)-1].line, goes, source) {
				edges = append(edges, k)
			}
		}
		if len(edges) == 0 {
			continue
		}
		ls := mf.blocks[b]
		for i, x := range ls {
			if x.line == key && x.addr == lb.Addr {
				mf.blocks[b] = append(ls[:i:i], ls[i+1:]...)
				break
			}
		}
		mf.labels = append(mf.labels, labelBlock{lines: []int32{key}, edges: edges})
	}
}

// labelDest returns the block a label at the start of block b stands
// for: b itself, or where b goes when it is only a goto_locus nop (a nop,
// then a jmp or a fall); -1 when that is not known.
func labelDest(g *cfg.Graph, b int, nops nopAt) int {
	bl := &g.Blocks[b]
	if !nops(bl.Start) {
		return b
	}
	out := g.Succs(b)
	switch {
	case len(out) != 1 || out[0].To < 0:
		return -1
	case bl.Term == cfg.TermJump && bl.Insts == 2, bl.Term == cfg.TermFall && bl.Insts == 1:
		return out[0].To
	}
	return b
}

// isDispatch reports whether arc e is a switch's: a jump table's entry
// (not a computed goto's), or a compare on the switch's line.
func isDispatch(m *Model, mf *modelFunc, g *cfg.Graph, e cfg.Edge, source func(string) ([]string, bool)) bool {
	from := &g.Blocks[e.From]
	if e.Kind == cfg.JumpTable {
		for _, t := range g.Tables {
			if t.Jump == from.Last {
				return !t.Computed
			}
		}
		return true
	}
	ls := mf.blocks[e.From]
	if from.Term != cfg.TermCond || len(ls) == 0 {
		return false
	}
	ref := m.keys[ls[len(ls)-1].line]
	src, ok := source(ref.File)
	return ok && ref.Line >= 1 && ref.Line <= len(src) && switchLine.MatchString(strings.TrimSpace(src[ref.Line-1]))
}

// caseAfter reports whether the first statement after the goto label at
// line label of file (its lines src), over blank lines and comments, is
// behind a case label: one written there, or one a macro it starts with
// writes (caseMacros). A case label before the user's is merged into the
// user's block instead: GCC keeps the user's label for it.
func (m *Model) caseAfter(file string, src []string, label int) bool {
	comment := false
	for l := label + 1; l <= len(src) && l-label <= 16; l++ {
		t := strings.TrimSpace(codeText(src[l-1], &comment))
		switch {
		case t == "":
			continue
		case isCaseLabel(t):
			return true
		}
		name := callStmt.FindStringSubmatch(t)
		return name != nil && m.caseMacros(file, src)[name[1]]
	}
	return false
}

// jumpsWith reports whether the source line of model key k matches re.
func jumpsWith(m *Model, k int32, re *regexp.Regexp, source func(string) ([]string, bool)) bool {
	ref := m.keys[k]
	src, ok := source(ref.File)
	return ok && ref.Line >= 1 && ref.Line <= len(src) && re.MatchString(src[ref.Line-1])
}

// headFirst matches a loop that starts with its body's label at -O0: no
// init and no condition at its top.
var headFirst = lazyRE(`^(for\s*\(\s*;\s*;|do\b|while\s*\(\s*1\s*\))`)

// ownLabelBlock reports whether the goto label at line label of src is a
// block of GCC's of its own: the first statement after it (over lines
// without rows: blank lines, comments, compiled-out asserts) starts
// behind a label of GCC's. A preprocessor line on the way leaves it
// unknown: no.
func ownLabelBlock(src []string, label int, rowed func(int) bool) bool {
	for l := label + 1; l <= len(src) && l-label <= 16; l++ {
		t := strings.TrimSpace(src[l-1])
		if kind, _ := directive(t); kind != ppNone {
			return false
		}
		if headFirst.MatchString(t) {
			return true
		}
		if controlStmt.MatchString(t) {
			return !rowed(l) // an if with no code: its join is GCC's label
		}
		if rowed(l) {
			return false
		}
	}
	return false
}

// foldable matches a break or continue statement alone on its line.
var foldable = lazyRE(`^(break|continue)\s*;\s*(/\*.*\*/|//.*)?$`)

// addFoldedJumps finds each break or continue with no row written right
// after an if whose then block leaves (returns, jumps), or each break
// alone in an if's then block that leaves a scope with clobbers (the
// goto of a then block that is only a goto has no location; the copy of
// the clobbers has the break's): -O0 folds its jmp into the if's conditional branch, but
// in GCC's graph the if's false (or true) arcs enter a block of the
// jump's own (its goto, located there; or the copy of clobbers, located
// there, of a scope it leaves) on the way to its destination. A continue's block also holds its predict
// statement, which has no location of its own and takes that of the
// innermost enclosing statement that has one: the brace of a block that
// declares variables (a BIND_EXPR); other enclosing statements are not
// modelled, so such a continue is left out.
func (m *Model) addFoldedJumps(g *cfg.Graph, mf *modelFunc, rs []fnRow, mem inMemory, fi int, source func(string) ([]string, bool)) {
	file, src, ok := funcSource(rs, source)
	if !ok {
		return
	}
	lo, hi, firstAt := rowSpan(rs, file)
	// The jumps leaving a scope with clobbers, each located by its copy.
	copied := map[int]bool{}
	if hi <= len(src) {
		for _, jumps := range m.exitsOf(mf, src, lo, hi, mem, true) {
			for _, l := range jumps {
				copied[l] = true
			}
		}
	}
	// Only the lines whose text the two rules below can take
	// (foldLines): at -O2 a function's range spans most of its file.
	for _, j32 := range linesFrom(m.text(src).foldLines(), lo+1) {
		j := int(j32)
		if j >= hi || j > len(src) {
			break
		}
		t := strings.TrimSpace(src[j-1])
		if _, rowed := firstAt[j]; !rowed && emptyElseIf(src, j, firstAt) {
			// The else branch's only statement is its condition: a
			// block of GCC's on the first if's false arcs.
			if ifl, then := ifOfElse(src, j, firstAt); ifl != 0 {
				m.addArcBlock(g, mf, file, ifl, then, []int{j}, fi)
			}
			continue
		}
		if _, rowed := firstAt[j]; rowed || !foldable.MatchString(t) {
			continue
		}
		// The if's false arcs (past a then block that leaves), or its
		// true arcs (into a then block that is only the jump), are the
		// jump's: the others go to skip.
		ifl, skip := leavingIfAbove(src, j, firstAt)
		if ifl == 0 && strings.HasPrefix(t, "break") && copied[j] {
			ifl, skip = onlyJumpIf(src, j, firstAt)
		}
		if ifl == 0 {
			continue
		}
		jumps := []int{j}
		if strings.HasPrefix(t, "continue") {
			brace := enclosingBrace(src, j)
			if brace == 0 || !declaresAt(src, brace) && !elseDeclares(src, brace) {
				continue
			}
			jumps = []int{brace, j}
		}
		m.addArcBlock(g, mf, file, ifl, skip, jumps, fi)
	}
}

// addArcBlock adds a block of GCC's with no code, holding lines of file,
// on the arcs out of the conditional blocks of the if at line ifl that go
// neither to the block at address skip nor to another test of that if.
func (m *Model) addArcBlock(g *cfg.Graph, mf *modelFunc, file string, ifl int, skip uint64, lines []int, fi int) {
	key, ok := m.keyOf(LineRef{File: file, Line: ifl})
	if !ok {
		return
	}
	var edges []int
	for k, e := range g.Edges {
		if e.From < 0 || e.To < 0 || g.Blocks[e.From].Term != cfg.TermCond {
			continue
		}
		ls, to := mf.blocks[e.From], mf.blocks[e.To]
		if len(ls) == 0 || ls[len(ls)-1].line != key || g.Blocks[e.To].Start == skip || len(to) > 0 && to[len(to)-1].line == key {
			continue // not the if's, the other way, or the condition's next test
		}
		edges = append(edges, k)
	}
	if len(edges) == 0 {
		return
	}
	var keys []int32
	for _, l := range lines {
		keys = append(keys, m.lineKey(LineRef{File: file, Line: l}, fi))
	}
	mf.labels = append(mf.labels, labelBlock{lines: keys, edges: edges})
}

// leavingIfAbove returns the line of the if whose then block (with no
// else) closes on the line above line j, past blank lines and comments,
// and whose last statement leaves; with the address where the then
// block's code starts. 0 when there is none.
func leavingIfAbove(src []string, j int, firstAt map[int]uint64) (int, uint64) {
	end := j - 1
	for end >= 1 && strings.TrimSpace(src[end-1]) == "" {
		end--
	}
	if end < 1 || !closeBrace.MatchString(strings.TrimSpace(src[end-1])) {
		return 0, 0
	}
	last := ""
	depth := 0
	comment := false
	for l := end; l >= 1 && end-l <= 64; l-- {
		t := strings.TrimSpace(codeText(src[l-1], &comment))
		depth += strings.Count(t, "}") - strings.Count(t, "{")
		if l < end && last == "" && t != "" {
			last = t
		}
		if depth == 0 {
			if !ifOpen.MatchString(t) || !leavesStmt.MatchString(last) {
				return 0, 0
			}
			for k := l + 1; k < end; k++ {
				if a, ok := firstAt[k]; ok {
					return l, a
				}
			}
			return 0, 0
		}
	}
	return 0, 0
}

// enclosingBrace returns the line of the brace that opens the innermost
// block holding line j, 0 when not found nearby.
func enclosingBrace(src []string, j int) int {
	depth := 0
	comment := false
	for l := j - 1; l >= 1 && j-l <= 256; l-- {
		t := codeText(src[l-1], &comment)
		for i := len(t) - 1; i >= 0; i-- { // right to left: `} else {` opens
			switch t[i] {
			case '}':
				depth++
			case '{':
				depth--
			}
			if depth < 0 {
				return l
			}
		}
	}
	return 0
}

// elseDeclares reports whether the else block opened at line brace (a
// `} else {` line) declares variables.
func elseDeclares(src []string, brace int) bool {
	t := src[brace-1]
	i := strings.LastIndex(t, "{")
	return elseOpens.MatchString(strings.TrimSpace(t)) && i >= 0 && declaresFrom(src, brace, i)
}

// onlyJumpIf returns the line of the if whose then block is only the
// jump statement at line j (`if( c ){` j `}`, no else), with the address
// where the code after the if starts. 0 when there is none.
func onlyJumpIf(src []string, j int, firstAt map[int]uint64) (int, uint64) {
	if j < 2 || j+1 > len(src) || !ifOpen.MatchString(strings.TrimSpace(src[j-2])) || !closeBrace.MatchString(strings.TrimSpace(src[j])) {
		return 0, 0
	}
	if _, ok := firstAt[j-1]; !ok {
		return 0, 0
	}
	for k := j + 2; k <= len(src) && k <= j+64; k++ {
		t := strings.TrimSpace(src[k-1])
		if strings.HasPrefix(t, "else") {
			return 0, 0
		}
		if a, ok := firstAt[k]; ok {
			return j - 1, a
		}
	}
	return 0, 0
}

// elseIfOpen matches an else-if whose block opens on its line.
var elseIfOpen = lazyRE(`^\}\s*else\s+if\s*\(.*\)\s*\{\s*$`)

// emptyElseIf reports whether line j is `} else if( cond ){` whose block,
// closed within a few lines with no further else, has no code, and whose
// condition loads through a pointer (GCC keeps it as a statement; see
// emptyIf).
func emptyElseIf(src []string, j int, firstAt map[int]uint64) bool {
	t := strings.TrimSpace(src[j-1])
	if !elseIfOpen.MatchString(t) || !strings.Contains(t, "->") && !strings.Contains(t, "[") {
		return false
	}
	for k := j + 1; k <= len(src) && k <= j+8; k++ {
		if _, ok := firstAt[k]; ok {
			return false
		}
		if kind, _ := directive(strings.TrimSpace(src[k-1])); kind != ppNone {
			return false // it may be compiled out
		}
		if strings.TrimSpace(src[k-1]) == "}" {
			return k == len(src) || !strings.HasPrefix(strings.TrimSpace(src[k]), "else")
		}
	}
	return false
}

// ifOfElse returns the line of the if whose then block the `}` at the
// start of line j closes, and where its then block's code starts; 0 when
// there is none nearby.
func ifOfElse(src []string, j int, firstAt map[int]uint64) (int, uint64) {
	l, t := openerAbove(src, j, 256)
	if l == 0 || !ifOpen.MatchString(t) && !elseIfOpen.MatchString(t) {
		return 0, 0
	}
	if _, ok := firstAt[l]; !ok {
		return 0, 0
	}
	for k := l + 1; k < j; k++ {
		if a, ok := firstAt[k]; ok {
			return l, a
		}
	}
	return 0, 0
}

// openerAbove returns the line, within reach above line j, that opens the
// block line j is in (its brace unmatched below it), and its code text
// trimmed; 0 when none is found.
func openerAbove(src []string, j, reach int) (int, string) {
	return openerAboveIn(func(l int, comment *bool) string { return strings.TrimSpace(codeText(src[l-1], comment)) }, j, reach)
}

// openerAboveIn is openerAbove over code(l, comment), a line's code text
// trimmed (srcText.codeTrim, or codeText of it).
func openerAboveIn(code func(l int, comment *bool) string, j, reach int) (int, string) {
	depth := 1 // the block's own closing brace, at or after line j
	comment := false
	for l := j - 1; l >= 1 && j-l <= reach; l-- {
		t := code(l, &comment)
		for i := len(t) - 1; i >= 0; i-- {
			switch t[i] {
			case '}':
				depth++
			case '{':
				depth--
			}
		}
		if depth <= 0 {
			return l, t
		}
	}
	return 0, ""
}

// caseMacro matches a #define whose body (its lines joined) holds a case
// label: group 1 is its name, group 2 its body.
var caseMacro = lazyRE(`^\s*#\s*define\s+([A-Za-z_]\w*)(?:\([^)]*\))?\s(.*)$`)

// caseWord matches a case label's keyword where a statement starts.
var caseWord = lazyRE(`(^|[;{}:]\s*)case\b`)

// caseMacros returns the function-like macros of file (its lines src)
// whose expansion writes a case label, directly or through another such
// macro (bzip2's GET_UCHAR is GET_BITS, which starts with a case), read
// once per file.
func (m *Model) caseMacros(file string, src []string) map[string]bool {
	if ms, ok := m.caseMacs[file]; ok {
		return ms
	}
	if m.caseMacs == nil {
		m.caseMacs = make(map[string]map[string]bool)
	}
	bodies := map[string]string{}
	for _, line := range defineLines(src) {
		if sm := caseMacro.FindStringSubmatch(line); sm != nil {
			bodies[sm[1]] = strings.TrimSpace(sm[2])
		}
	}
	// The macros that write a case themselves, matched once: the loop
	// below asks again of every other macro each time round.
	var ms map[string]bool
	for name, body := range bodies {
		if caseWord.MatchString(body) {
			if ms == nil {
				ms = make(map[string]bool)
			}
			ms[name] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for name, body := range bodies {
			if ms[name] {
				continue
			}
			if usesMacro(body, ms) {
				if ms == nil {
					ms = make(map[string]bool)
				}
				ms[name] = true
				changed = true
			}
		}
	}
	m.caseMacs[file] = ms
	return ms
}
