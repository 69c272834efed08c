package linemodel

import (
	"sort"
	"strings"

	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/lineinfo"
)

// caseLabel matches a source line that is only a `case` or `default`
// label (an opening brace or a comment, possibly running on to the next
// lines, may follow).
var caseLabel = lazyRE(`^(case\b[^;{}]*|default\s*):\s*\{?\s*(//.*|/\*.*)?$`)

// caseLabelThen matches a `case` or `default` label followed by more text
// on its line. The search for a label only looks at lines without code, so
// the text is a statement that compiles to nothing (SQLite's testcase()
// macro): the label is still GCC's.
var caseLabelThen = lazyRE(`^(case\b[^;{}]*|default\s*):\s*\S`)

// isCaseLabel reports whether a trimmed source line starts with a `case`
// or `default` label (caseLabel, caseLabelThen), read with its character
// and string literals blanked: `case '{':` is a label.
func isCaseLabel(text string) bool {
	comment := false
	t := strings.TrimSpace(codeText(text, &comment))
	return caseLabel.MatchString(t) || caseLabelThen.MatchString(t)
}

// stopsLabel matches a source line a case label's search does not go
// above although it has no code: a statement that leaves the case
// (compiled out, or it would have code).
var stopsLabel = lazyRE(`^(break|continue|return|goto)\b`)

// userLabel matches a goto label alone on its line. GCC names a block
// that starts at several labels after the user's label, dropping the case
// labels (cleanup_dead_labels), so gcov then counts no case line.
var userLabel = lazyRE(`^[A-Za-z_]\w*\s*:\s*(/\*.*|//.*)?$`)

// switchLine matches the line of a switch statement, where GCC -O0 puts
// the compare-and-branch chain that dispatches to the cases.
var switchLine = lazyRE(`^switch\b`)

// addCaseLabels puts before the lines of each block that starts a case
// the `case` or `default` label written above its first line, as gcov
// counts it: GCC's label statement starts the block and DWARF records no
// address for it. A case starts a block control jumps to, or the block a
// switch's last compare falls into; the block must start at the first
// address of its line. GCC -O0 may give the switch's compares no row of
// their own (they carry the line above), so an arc from above counts as
// the dispatch when a switch or another case label lies between.
//
// The label search goes up from the block's first line over lines without
// code in the function (blank lines, comments, declarations, macros that
// expand to nothing) or that begin the block's statement (evaluatedLater),
// and stops at a line with code before the block or at
// a statement that leaves the case. It reads preprocessor conditionals as the compiler did
// (ppFile): labels in a branch that was compiled out are not labels. Of
// several labels with no code between them GCC keeps one, at the first
// (topmost) of them.
//
// A case the code above falls into after a branch (an if without else, the
// end of a loop or of an if/else) has no line of its own in gcov: GCC's
// artificial label joining that branch starts the block, and the case
// labels after it are merged into that label, which has no location.
func (m *Model) addCaseLabels(g *cfg.Graph, mf *modelFunc, rs []fnRow, lt *lineinfo.Table, fi int, source func(string) ([]string, bool)) {
	firstAt := map[LineRef]uint64{}
	for _, r := range rs {
		if a, ok := firstAt[r.ref]; !ok || r.addr < a {
			firstAt[r.ref] = r.addr
		}
	}
	// Arcs that can enter a case: a jump, or a switch's last compare
	// falling into its case.
	preds := make([][]cfg.Edge, len(g.Blocks))
	for _, e := range g.Edges {
		if e.To < 0 || e.From < 0 {
			continue
		}
		if e.Kind == cfg.Taken || e.Kind == cfg.JumpTable || e.Kind == cfg.Fallthrough && g.Blocks[e.From].Term == cfg.TermCond {
			preds[e.To] = append(preds[e.To], e)
		}
	}
	for b, bl := range g.Blocks {
		ls := mf.blocks[b]
		if len(preds[b]) == 0 || len(ls) == 0 || ls[0].addr != bl.Start {
			continue
		}
		first := m.keys[ls[0].line]
		threaded := firstAt[first] != bl.Start
		// The dispatch may skip the jump into the loop the case's first
		// statement is (NEEDBITS's while) and go to its condition: the
		// case then starts at that jump, at the line's first code.
		if threaded && !hasTablePred(preds[b]) {
			continue
		}
		src, ok := source(first.File)
		if !ok || first.Line < 2 || first.Line > len(src) || userLabel.MatchString(strings.TrimSpace(src[first.Line-1])) {
			continue // the block starts at a goto label: GCC keeps that one
		}
		label := m.caseLabelAbove(first, firstAt[first], src, lt, rs, firstAt)
		if label == 0 || joinsBranch(m, mf, g, preds[b], first.File, label, src) {
			continue
		}
		key := m.lineKey(LineRef{File: first.File, Line: label}, fi)
		if !threaded {
			if enteredOnlyFromBelow(m, mf, g, b, first.File, label) {
				continue // the body of the loop the dispatch skipped into
			}
			if edges := dispatchPast(m, mf, g, b, first.File, src); edges != nil {
				if mf.folded == nil {
					mf.folded = make(map[int]bool)
				}
				if to := g.Succs(b)[0].To; trailingLabel(src, label, first.File, firstAt) {
					// The switch's end is the label's block: every way
					// into it counts the label.
					mf.blocks[to] = append([]lineAt{{line: key, addr: g.Blocks[to].Start}}, mf.blocks[to]...)
					mf.blocks[b] = nil
					mf.folded[b] = true
					continue
				}
				// The label block holds the goto too: the jmp's own block
				// is no block of GCC's (it never runs when the range check
				// does all the dispatching), arcs into it go on to its
				// target (Model.flowOf's through).
				mf.labels = append(mf.labels, labelBlock{lines: []int32{key, ls[0].line}, edges: edges})
				mf.blocks[b] = nil
				mf.folded[b] = true
				continue
			}
			mf.blocks[b] = append([]lineAt{{line: key, addr: ls[0].addr}}, ls...)
			if mf.caseHead == nil {
				mf.caseHead = make(map[int]bool)
			}
			mf.caseHead[b] = true
			continue
		}
		// GCC's block for the label holds it and the jump to the loop's
		// condition: the dispatch enters it, and so does the code above
		// that falls into the jump; the loop's back edge does not.
		var edges []int
		for k, e := range g.Edges {
			if e.To == b && e.From >= 0 && (e.Kind == cfg.JumpTable || g.Blocks[e.From].Last == firstAt[first]) {
				edges = append(edges, k)
			}
		}
		mf.labels = append(mf.labels, labelBlock{lines: []int32{key, ls[0].line}, edges: edges})
	}
}

// dispatchPast returns the arcs of a case's label block when the case's
// first block b is a lone jmp (a default's goto) that the switch's
// dispatch also jumps past, straight to its target (a bit-test switch's
// range check): b's arcs in and the dispatch's arcs to the target, all
// of which GCC's label block takes. nil when there are none such.
func dispatchPast(m *Model, mf *modelFunc, g *cfg.Graph, b int, file string, src []string) []int {
	bl := &g.Blocks[b]
	out := g.Succs(b)
	if bl.Term != cfg.TermJump || bl.Insts != 1 || len(out) != 1 || out[0].To < 0 {
		return nil
	}
	to := out[0].To
	var edges []int
	past := false
	ins := mf.predsOf(g)
	arcs := ins[b]
	if to != b {
		arcs = mergeEdges(ins[b], ins[to])
	}
	for _, k32 := range arcs {
		k, e := int(k32), g.Edges[k32]
		switch {
		case e.From < 0:
		case e.To == b:
			edges = append(edges, k)
		case e.To == to && e.From != b:
			ls := mf.blocks[e.From]
			if len(ls) == 0 {
				continue
			}
			if ref := m.keys[ls[len(ls)-1].line]; ref.File == file && ref.Line >= 1 && ref.Line <= len(src) &&
				switchLine.MatchString(strings.TrimSpace(src[ref.Line-1])) {
				edges = append(edges, k)
				past = true
			}
		}
	}
	if !past {
		return nil
	}
	return edges
}

// hasTablePred reports whether one of the arcs is a jump table's.
func hasTablePred(preds []cfg.Edge) bool {
	for _, e := range preds {
		if e.Kind == cfg.JumpTable {
			return true
		}
	}
	return false
}

// enteredOnlyFromBelow reports whether every arc into block b comes from
// code below line label: b is the body of a loop whose condition the
// dispatch of the case at label goes to, not the case's entry.
func enteredOnlyFromBelow(m *Model, mf *modelFunc, g *cfg.Graph, b int, file string, label int) bool {
	n := 0
	for _, k := range mf.predsOf(g)[b] {
		e := g.Edges[k]
		if e.From < 0 {
			continue
		}
		n++
		ls := mf.blocks[e.From]
		if e.Kind == cfg.JumpTable || len(ls) == 0 {
			return false
		}
		if ref := m.keys[ls[len(ls)-1].line]; ref.File != file || ref.Line <= label {
			return false
		}
	}
	return n > 0
}

// joinsBranch reports whether one of the arcs into a case at line label
// comes from a branch of the code above it that is no part of a switch's
// dispatch: a jump or a conditional's fall-through from a line above the
// label with no switch and no other case label between them, nor a goto
// label, whose block the branch joins instead (a case label after it
// starts a block of its own).
func joinsBranch(m *Model, mf *modelFunc, g *cfg.Graph, preds []cfg.Edge, file string, label int, src []string) bool {
	for _, e := range preds {
		if e.Kind == cfg.JumpTable {
			continue
		}
		ls := mf.blocks[e.From]
		if len(ls) == 0 {
			continue
		}
		ref := m.keys[ls[len(ls)-1].line]
		if ref.File != file || ref.Line >= label || ref.Line < 1 {
			continue // a loop's back edge, or another file's code
		}
		dispatch := false
		for l := ref.Line; l < label && !dispatch; l++ {
			t := strings.TrimSpace(src[l-1])
			dispatch = switchLine.MatchString(t) || isCaseLabel(t) || l > ref.Line && userLabel.MatchString(t)
		}
		if !dispatch {
			return true
		}
	}
	return false
}

// labelReach bounds how far above a block's first line the search for its
// case label goes, over lines without code: a generated parser's default
// label may stand above a long list of compiled-out statements (SQLite's
// yy_reduce, 66 lines).
const labelReach = 256

// caseLabelAbove returns the line of the case label GCC keeps for the
// statement at first, 0 when there is none (see addCaseLabels).
func (m *Model) caseLabelAbove(first LineRef, start uint64, src []string, lt *lineinfo.Table, rs []fnRow, firstAt map[LineRef]uint64) int {
	pp := m.preprocessed(first.File, src, lt)
	tx := m.text(src)
	label := 0
	live := true // the line was compiled
	// A frame per conditional the search is in, entered through its
	// #endif or from the statement inside it.
	type frame struct {
		outer bool // its surroundings were compiled
		taken bool // one of its branches below was
	}
	var stack []frame
	for l := first.Line - 1; l >= 1 && first.Line-l <= labelReach; l-- {
		text := tx.trim(l)
		switch kind, _ := directive(text); kind {
		case ppNone:
		case ppEndif:
			f := frame{outer: live}
			if live {
				st := pp.branchAbove(src, l)
				if st == 0 && onlyCaseLabels(src, l) {
					// Compiled or not, the search goes on above it: a
					// label there is GCC's either way.
					live = false
					stack = append(stack, f)
					continue
				}
				if st == 0 {
					return label // can't tell what was compiled above
				}
				live = st > 0
				f.taken = live
			}
			stack = append(stack, f)
			continue
		case ppElse, ppElif:
			if len(stack) == 0 {
				// The conditional the statement is in: its branch was
				// compiled.
				stack = append(stack, frame{outer: true, taken: true})
			}
			f := &stack[len(stack)-1]
			if !f.outer || f.taken {
				live = false // at most one branch is compiled
				continue
			}
			st := pp.branchAbove(src, l)
			if st == 0 {
				return label
			}
			live = st > 0
			f.taken = live
			continue
		case ppIf:
			live = true // left the conditional the statement is in
			if n := len(stack); n > 0 {
				live = stack[n-1].outer
				stack = stack[:n-1]
			}
			continue
		default:
			continue // #define, #undef, #pragma: no statement
		}
		if !live {
			continue
		}
		if a, ok := firstAt[LineRef{File: first.File, Line: l}]; ok && !evaluatedLater(rs, firstAt, first, l, start, a) || stopsLabel.MatchString(text) {
			break
		}
		if tx.isCaseLabel(l) {
			label = l
		} else if userLabel.MatchString(text) {
			// A case label after the user's starts a block of its own
			// (stmt_starts_bb_p: a label starts one unless the label
			// before it is GCC's); with no case label between, GCC keeps
			// the user's label for the block, not a case's above it.
			return label
		}
	}
	return label
}

// onlyCaseLabels reports whether the conditional that ends at line endif
// of src (one branch, no nested directive) holds only case labels, blank
// lines and comments.
func onlyCaseLabels(src []string, endif int) bool {
	comment := false
	for l := endif - 1; l >= 1; l-- {
		t := strings.TrimSpace(src[l-1])
		switch kind, _ := directive(t); kind {
		case ppIf:
			return true
		case ppNone:
		default:
			return false
		}
		if strings.TrimSpace(codeText(t, &comment)) != "" && !isCaseLabel(t) {
			return false
		}
	}
	return false
}

// evaluatedLater reports whether line l above the statement at first
// (whose code starts at start) is part of that same statement, evaluated
// after its later lines: its code (first at a) comes after start, with
// only rows of lines below l, or of lines whose code also starts at or
// after start, between them (an assignment or a call whose operands on
// the next lines GCC evaluates first, in any order of its lines).
func evaluatedLater(rs []fnRow, firstAt map[LineRef]uint64, first LineRef, l int, start, a uint64) bool {
	if a < start {
		return false
	}
	k := sort.Search(len(rs), func(k int) bool { return rs[k].addr >= start })
	for ; k < len(rs) && rs[k].addr < a; k++ {
		if r := rs[k].ref; r.File != first.File || r.Line <= l && firstAt[r] < start {
			return false
		}
	}
	return true
}

// condKey returns the key under which a condition's truth is kept and
// whether the condition is its negation: #ifndef X is #ifdef X negated,
// so one's branch with code tells the other's.
func condKey(cond string) (key string, neg bool) {
	if name, ok := strings.CutPrefix(cond, "ifndef "); ok {
		return "ifdef " + name, true
	}
	return cond, false
}

// callStmt matches a statement that is a call, capturing the callee: one
// of the program's functions has code wherever it is compiled (a macro
// of the same name as a function is not expected).
var callStmt = lazyRE(`^([A-Za-z_]\w*)\s*\(.*\)\s*;\s*(/\*.*\*/|//.*)?$`)

// controlStmt matches a line that starts a control statement, which has
// code wherever it is compiled.
var controlStmt = lazyRE(`^(\}\s*else\s+)?(if|for|while|switch)\s*\(`)

// The kinds of preprocessor lines the label search reads.
const (
	ppNone  = iota // not a directive
	ppIf           // #if, #ifdef, #ifndef
	ppElif         // #elif, #elifdef, #elifndef
	ppElse         // #else
	ppEndif        // #endif
	ppOther        // any other directive
)

var directiveRE = lazyRE(`^#\s*([a-z]+)\b(.*)$`)

// directive returns the kind of a trimmed source line and, for #if and its
// kin, its condition as written (spaces collapsed, comments kept: the
// same condition is written the same way across an amalgamation).
func directive(text string) (kind int, cond string) {
	if !strings.HasPrefix(text, "#") {
		return ppNone, "" // most lines: no call of the expression
	}
	sm := directiveRE.FindStringSubmatch(text)
	if sm == nil {
		return ppNone, ""
	}
	switch sm[1] {
	case "if", "ifdef", "ifndef":
		return ppIf, sm[1] + " " + strings.Join(strings.Fields(sm[2]), " ")
	case "elif", "elifdef", "elifndef":
		return ppElif, ""
	case "else":
		return ppElse, ""
	case "endif":
		return ppEndif, ""
	}
	return ppOther, ""
}

// A ppFile is what a source file's line table tells of its preprocessor
// conditionals: a condition whose first branch holds a line with code
// somewhere in the file was true, one whose #else branch does was false;
// and a branch amid a function's code that holds a control statement but
// no row was compiled out. Contradicting evidence leaves it unknown.
// The search for a case label needs it to step over a conditional whose
// branch holds only labels (no code to tell).
type ppFile struct {
	cond map[string]int8 // condition -> 1 true, -1 false, 0 unknown or contradictory
}

// preprocessed returns the file's ppFile, reading it on first use.
func (m *Model) preprocessed(file string, src []string, lt *lineinfo.Table) *ppFile {
	if pp, ok := m.pp[file]; ok {
		return pp
	}
	if m.pp == nil {
		m.pp = map[string]*ppFile{}
	}
	// rows[l] counts lines 1..l with a row.
	has := make([]bool, len(src)+2)
	for _, r := range lt.Rows {
		if int(r.File) < len(lt.Files) && lt.Files[r.File] == file && int(r.Line) < len(has) {
			has[r.Line] = true
		}
	}
	rows := make([]int, len(has))
	for l := 1; l < len(has); l++ {
		rows[l] = rows[l-1]
		if has[l] {
			rows[l]++
		}
	}
	coded := func(lo, hi int) bool { return hi > lo && rows[hi-1]-rows[lo-1] > 0 } // lines [lo, hi)
	pp := &ppFile{cond: map[string]int8{}}
	seen := map[string]int8{} // bit 1: seen true, bit 2: seen false
	type open struct {
		cond   string
		start  int // first line of the current branch
		branch int // 0 for the #if's own branch
		elif   bool
	}
	var stack []open
	closeBranch := func(o open, end int) {
		key, neg := condKey(o.cond)
		if !coded(o.start, end) {
			// A branch inside a function's code with a control statement
			// but no row was compiled out: it would have code.
			if o.elif || !coded(max(o.start-40, 1), o.start) || !coded(end, min(end+40, len(has))) {
				return
			}
			ctl := false
			for l := o.start; l < end && !ctl; l++ {
				t := strings.TrimSpace(src[l-1])
				call := callStmt.FindStringSubmatch(t)
				ctl = controlStmt.MatchString(t) || call != nil && m.funcNames[call[1]]
			}
			if ctl {
				if o.branch == 0 != neg {
					seen[key] |= 2
				} else {
					seen[key] |= 1
				}
			}
			return
		}
		switch {
		case o.branch == 0 && !neg, o.branch > 0 && !o.elif && neg:
			seen[key] |= 1
		case o.branch == 0 && neg, !o.elif:
			seen[key] |= 2 // the #else branch, or #ifndef's own
		}
	}
	for i, line := range src {
		l := i + 1
		kind, cond := directive(strings.TrimSpace(line))
		switch kind {
		case ppIf:
			stack = append(stack, open{cond: cond, start: l + 1})
		case ppElif, ppElse:
			if n := len(stack); n > 0 {
				o := &stack[n-1]
				closeBranch(*o, l)
				o.branch++
				o.start = l + 1
				o.elif = o.elif || kind == ppElif
			}
		case ppEndif:
			if n := len(stack); n > 0 {
				closeBranch(stack[n-1], l)
				stack = stack[:n-1]
			}
		}
	}
	for c, s := range seen {
		switch s {
		case 1:
			pp.cond[c] = 1
		case 2:
			pp.cond[c] = -1
		}
	}
	m.pp[file] = pp
	return pp
}

// branchAbove returns whether the branch of a conditional that ends at
// line at (its #else, #elif or #endif) was compiled: 1 yes, -1 no, 0
// unknown. It is known for the #if's own branch and for an #else branch
// with no #elif before it.
func (pp *ppFile) branchAbove(src []string, at int) int8 {
	depth := 0
	sawElse := false
	for l := at - 1; l >= 1; l-- {
		kind, cond := directive(strings.TrimSpace(src[l-1]))
		switch kind {
		case ppEndif:
			depth++
		case ppIf:
			if depth > 0 {
				depth--
				continue
			}
			key, neg := condKey(cond)
			st := pp.cond[key]
			if neg {
				st = -st
			}
			if sawElse {
				st = -st
			}
			return st
		case ppElse:
			if depth == 0 {
				if sawElse {
					return 0
				}
				sawElse = true
			}
		case ppElif:
			if depth == 0 {
				return 0
			}
		}
	}
	return 0
}
