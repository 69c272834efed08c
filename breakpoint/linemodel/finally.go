package linemodel

import (
	"slices"
	"sort"
	"strings"

	"github.com/patchprof/patchprof/cfg"
)

// A compound statement that declares a variable whose address is taken
// ends its variables' lifetimes with clobbers, which GCC's gimplifier
// wraps around the block as a try/finally (gimplify_bind_expr). Lowering
// it (tree-eh.cc, lower_try_finally_copy, always chosen for a finally of
// clobbers when the block has two or more ways out) emits one copy of the
// clobbers per destination of the jumps leaving the block, located at the
// first such jump (in source order) to that destination, and every jump
// to the destination goes through that copy. gcov counts the copy's block
// under the first jump's line, so that line counts every jump leaving
// the block for that destination. -O0 emits no code for clobbers: the
// model adds the copy as a block of its own.

// A finally is one destination's copy of a block's clobbers: a block of
// GCC's with no code that the arcs leaving the jumps' blocks run through.
type finally struct {
	line  int32 // model key of the first jump's line
	froms []int // the blocks of the jumps to the destination
}

// exitJump matches a jump statement and captures its kind and, for a
// goto, its label.
var exitJump = lazyRE(`(?:^|[;{)]\s*|\belse\s+)(break|continue|return|goto\s+(\w+))\b`)

// exitsOf returns, per scope of src lines lo to hi that declares a
// variable whose address it takes (or that mem says lives in memory), and
// has two or more ways out (its end, when a statement other than a jump
// ends it, counts as one), the lines of the jumps leaving it, grouped by
// destination in source order: those of two jumps or more (single, all
// of them: a copy for one jump is located at that jump).
//
// A jump that leaves an inner such scope first reaches the outer one as
// the inner copy's goto, which has no location: when it is the first to
// its destination, the outer copy has none either, and it is left out of
// the outer group.
func exitsOf(src []string, lo, hi int, mem inMemory, single bool) [][]int {
	multi, some := exitGroups(newSrcText(src), lo, hi, mem)
	if single {
		return some
	}
	return multi
}

// exitsOf is exitsOf for the function mf, kept for its second call: the
// finallies and the folded jumps each ask, and scanning a function's
// source for its scopes and jumps was a tenth of a SQLite run.
func (m *Model) exitsOf(mf *modelFunc, src []string, lo, hi int, mem inMemory, single bool) [][]int {
	e := &m.exits
	if e.mf != mf || e.lo != lo || e.hi != hi {
		e.multi, e.some = exitGroups(m.text(src), lo, hi, mem)
		e.mf, e.lo, e.hi = mf, lo, hi
	}
	if single {
		return e.some
	}
	return e.multi
}

// exitsMemo is Model.exitsOf's last answer.
type exitsMemo struct {
	mf          *modelFunc
	lo, hi      int
	multi, some [][]int
}

// exitGroups is exitsOf's groups, for single false (multi) and true (some),
// over the index of the source.
func exitGroups(tx *srcText, lo, hi int, mem inMemory) (multi, some [][]int) {
	all := scopesOf(tx, lo, hi)
	// A scope clobbers only what it declares (takesAddressIn, declares):
	// with no declaration, no line's words are needed.
	if !slices.ContainsFunc(all, func(s scope) bool { return len(s.names) > 0 }) {
		return nil, nil
	}
	comment := false
	text := make([]string, 0, hi-lo+1)
	trimmed := make([]string, 0, hi-lo+1)
	// inside says which lines were read from inside a block comment: the
	// others' words are kept in the index, read once per file.
	var inside []bool
	for l := lo; l <= hi && l <= len(tx.src); l++ {
		inside = append(inside, comment)
		c, t := tx.code(l, &comment)
		text, trimmed = append(text, c), append(trimmed, t)
	}
	at := func(l int) string { return trimmed[l-lo] }
	// The lines that take an address, and those with a jump, in order: a
	// scope looks only at those within it (the scopes of a long function
	// nest deeply, and each would scan its lines again).
	addrs := make([][]string, len(text))
	var addrLines []int
	for k, t := range text {
		if addrs[k] = tx.words(lo+k, inside[k], t, false); len(addrs[k]) > 0 {
			addrLines = append(addrLines, lo+k)
		}
	}
	names := func(l int) []string { return addrs[l-lo] }
	// Most functions have no such scope: then no line's jump is needed.
	clobbers := make([]bool, len(all))
	anyClobbers := false
	for si, s := range all {
		clobbers[si] = takesAddressIn(s, linesWithin(addrLines, s), names) || mem.declares(s)
		anyClobbers = anyClobbers || clobbers[si]
	}
	if !anyClobbers {
		return nil, nil
	}
	jumps := make([][]string, len(text))
	var jumpLines []int
	for k, t := range trimmed {
		if jumps[k] = tx.words(lo+k, inside[k], t, true); jumps[k] != nil {
			jumpLines = append(jumpLines, lo+k)
		}
	}
	jumpAt := func(l int) []string { return jumps[l-lo] }
	labeled := labelLines(at, lo, lo+len(text)-1)
	innermost := innermostOf(all, lo, hi)
	copies := exitCopies(all, clobbers, at, jumpAt, jumpLines, labeled, innermost)
	// viaInner reports whether the jump at line l leaves a scope with
	// copies inside scope si on its way out.
	viaInner := func(si, l int) bool {
		for ti, t := range all {
			if ti == si || copies[ti] == nil || t.open <= all[si].open || t.close >= all[si].close || l <= t.open || l >= t.close {
				continue
			}
			if m := jumpAt(l); m != nil && destOf(all, ti, l, m, labeled, innermost) != "" {
				return true
			}
		}
		return false
	}
	for si, e := range copies {
		if e == nil {
			continue
		}
		for _, d := range e.order {
			jumps := e.dests[d]
			if viaInner(si, jumps[0]) {
				continue
			}
			var own []int
			for _, l := range jumps {
				if !viaInner(si, l) {
					own = append(own, l)
				}
			}
			if len(own) > 1 {
				multi = append(multi, own)
			}
			if len(own) > 0 {
				some = append(some, own)
			}
		}
	}
	return multi, some
}

// A scopeExits is where the jumps leaving one scope go: each destination
// in order of first sight, and the lines of the jumps to it.
type scopeExits struct {
	order []string
	dests map[string][]int
}

// exitCopies returns, per scope of all whose clobbers GCC copies, where
// its jumps go: a scope with clobbers and at least two exits (its end
// falling through is one). The others are nil. at is the code text of a
// line, trimmed, jumpAt its exit jump (findExitJump), labeled tells where
// a label is (labelLines).
func exitCopies(all []scope, clobbers []bool, at func(int) string, jumpAt func(int) []string, jumpLines []int, labeled func(string, int, int) bool, innermost func(int) int) []*scopeExits {
	copies := make([]*scopeExits, len(all)) // nil: no copies of clobbers
	for si, s := range all {
		if !clobbers[si] {
			continue
		}
		e := &scopeExits{dests: map[string][]int{}}
		for _, l := range linesWithin(jumpLines, s) {
			m := jumpAt(l)
			d := destOf(all, si, l, m, labeled, innermost)
			if d == "" {
				continue
			}
			if _, ok := e.dests[d]; !ok {
				e.order = append(e.order, d)
			}
			e.dests[d] = append(e.dests[d], l)
		}
		n := len(e.order)
		if s.kind == "loop" || endFallsThrough(at, s.open, s.close) {
			n++ // its end falls through
		}
		if n >= 2 {
			copies[si] = e
		}
	}
	return copies
}

// takesAddress reports whether scope s applies & to a name it declares.
func takesAddress(s scope, at func(int) string) bool {
	var lines []int
	for l := s.open + 1; l < s.close; l++ {
		lines = append(lines, l)
	}
	return takesAddressIn(s, lines, func(l int) []string { return addressed(at(l)) })
}

// takesAddressIn is takesAddress over the names each of lines (those of
// s that take an address; every other line of s takes none) takes the
// address of (addressed), which exitsOf computes once per line: a
// function of thousands of lines has hundreds of scopes.
func takesAddressIn(s scope, lines []int, names func(int) []string) bool {
	for _, l := range lines {
		for _, n := range names(l) {
			for _, d := range s.names {
				if n == d {
					return true
				}
			}
		}
	}
	return false
}

// addressed returns the names line applies a unary & to. A unary &
// follows an operator, a bracket or a separator, not an operand (a
// bitwise and; && is no &). &p->f and &p[i] take no address of p itself.
// A cast to a pointer, `(T*)&v`, ends in `*)`, which no operand does.
func addressed(line string) []string {
	var out []string
	for i := 0; i < len(line); i++ {
		if line[i] != '&' {
			continue
		}
		if i+1 < len(line) && line[i+1] == '&' {
			i++ // a logical and
			continue
		}
		if !unaryAt(line, i) {
			continue
		}
		k := skipSpace(line, i+1)
		e := k
		for e < len(line) && isWordByte(line[e]) {
			e++
		}
		if e == k {
			continue
		}
		if n := skipSpace(line, e); n < len(line) && (line[n] == '[' || line[n] == '-' || isWordByte(line[n])) {
			continue // an element, a member through ->, or no name of its own
		}
		out = append(out, line[k:e])
	}
	return out
}

// unaryAt reports whether the & at line[i] is unary, from what precedes it.
func unaryAt(line string, i int) bool {
	j := i - 1
	for j >= 0 && isSpaceByte(line[j]) {
		j--
	}
	if j < 0 {
		return true
	}
	if line[j] == '&' && j > 0 && line[j-1] == '&' {
		return true // after a logical and
	}
	if strings.IndexByte("(,=?:;{[!~+-*/%<>|^", line[j]) >= 0 {
		return true
	}
	if line[j] == ')' { // a cast to a pointer
		for j--; j >= 0 && isSpaceByte(line[j]); j-- {
		}
		return j >= 0 && line[j] == '*'
	}
	return false
}

func skipSpace(s string, i int) int {
	for i < len(s) && isSpaceByte(s[i]) {
		i++
	}
	return i
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// labelsAt reports whether trimmed line t defines label: the label after
// the line's start or a ; { or } (and spaces), then a colon that is not
// the first of ::.
func labelsAt(t, label string) bool {
	if strings.IndexByte(t, ':') < 0 {
		return false // no label's colon
	}
	for off := 0; ; {
		k := strings.Index(t[off:], label)
		if k < 0 || label == "" {
			return false
		}
		p := off + k
		off = p + 1
		j := p - 1
		for j >= 0 && isSpaceByte(t[j]) {
			j--
		}
		if p > 0 && (j < 0 || strings.IndexByte(";{}", t[j]) < 0) {
			continue
		}
		c := skipSpace(t, p+len(label))
		if c < len(t) && t[c] == ':' && (c+1 == len(t) || t[c+1] != ':') {
			return true
		}
	}
}

// labelLines returns the function that tells whether one of lines lo to
// hi of a function (at: their code text, trimmed) defines a label
// (labelsAt), which reads the lines once per label, on first use: a goto
// is asked after for each scope it may leave, and a long function has
// hundreds of each.
func labelLines(at func(int) string, lo, hi int) func(label string, from, to int) bool {
	lines := map[string][]int{} // per label, the lines defining it, in order
	return func(label string, from, to int) bool {
		ls, ok := lines[label]
		if !ok {
			for l := lo; l <= hi; l++ {
				if labelsAt(at(l), label) {
					ls = append(ls, l)
				}
			}
			lines[label] = ls
		}
		k := sort.SearchInts(ls, from)
		return k < len(ls) && ls[k] <= to
	}
}

// destOf names where the jump m at line l goes when it leaves scope si
// (of all), "" when it stays inside. labeled tells whether a line of a
// range defines a label (labelLines), innermost which scope of all is
// the innermost holding a line (innermostOf).
func destOf(all []scope, si, l int, m []string, labeled func(label string, from, to int) bool, innermost func(l int) int) string {
	kind := strings.Fields(m[1])[0]
	switch kind {
	case "return":
		return "return"
	case "goto":
		if labeled(m[2], all[si].open, all[si].close) {
			return ""
		}
		return "goto " + m[2]
	}
	in := innermost(l)
	inside := true // still within scope si
	for k := in; k >= 0; k = all[k].parent {
		if k == si {
			inside = false
		}
		if all[k].kind == "loop" || kind == "break" && all[k].kind == "switch" {
			if inside {
				return ""
			}
			return kind + " " + strings.Repeat("^", k)
		}
	}
	return ""
}

// addFinallies gives the function's blocks the copies of clobbers its
// scopes' exits run through (see finally).
func addFinallies(m *Model, g *cfg.Graph, mf *modelFunc, rs []fnRow, mem inMemory, source func(string) ([]string, bool)) {
	file, src, ok := funcSource(rs, source)
	if !ok {
		return
	}
	lo, hi := rs[0].ref.Line, rs[0].ref.Line
	for _, r := range rs {
		if r.ref.File == file {
			lo, hi = min(lo, r.ref.Line), max(hi, r.ref.Line)
		}
	}
	if hi > len(src) {
		return
	}
	taken := map[int]bool{}
	for _, jumps := range m.exitsOf(mf, src, lo, hi, mem, false) {
		first, ok := m.keyOf(LineRef{File: file, Line: jumps[0]})
		if !ok {
			continue
		}
		fin := finally{line: first}
		for _, l := range jumps {
			key, ok := m.keyOf(LineRef{File: file, Line: l})
			if !ok {
				continue
			}
			for b := range g.Blocks {
				ls := mf.blocks[b]
				if n := len(ls); n > 0 && ls[n-1].line == key && len(g.Succs(b)) == 1 && !taken[b] &&
					(g.Blocks[b].Term == cfg.TermJump || g.Blocks[b].Term == cfg.TermFall) && !m.destructs(g, g.Succs(b)[0].To) {
					fin.froms = append(fin.froms, b)
					taken[b] = true
				}
			}
		}
		if len(fin.froms) < 2 {
			continue
		}
		if d := onlyEntry(g, fin.froms); d >= 0 {
			// The copy's goto is the destination's only way in: GCC's
			// graph merges the copy into the destination's block.
			if ls := mf.blocks[d]; len(ls) == 0 || ls[0].line != first {
				mf.blocks[d] = append([]lineAt{{line: first, addr: g.Blocks[d].Start}}, ls...)
			}
			continue
		}
		mf.finallies = append(mf.finallies, fin)
	}
}

// destructs reports whether block b calls a C++ destructor: a jump
// into it from a scope's exit runs first through the cleanup of an
// object declared before the jump (a try/finally of its own, nested in
// the one of the scope's clobbers), whose lowering (a copy, or a switch
// on finally_tmp that -O0 keeps as code) goes on to the clobbers' copy:
// the jump's own arc is no arc of that copy.
func (m *Model) destructs(g *cfg.Graph, b int) bool {
	if b < 0 || g.Blocks[b].Term != cfg.TermCall {
		return false
	}
	for _, c := range g.Calls {
		if c.Block != b {
			continue
		}
		name := c.Name
		if name == "" && m.callName != nil && c.Target != 0 {
			name = m.callName(c.Target)
		}
		if strings.Contains(name, "::~") || strings.HasSuffix(name, "D1Ev") || strings.HasSuffix(name, "D2Ev") {
			return true
		}
	}
	return false
}

// onlyEntry returns the block all of froms (blocks with one arc) go to
// when no other arc enters it, -1 otherwise.
func onlyEntry(g *cfg.Graph, froms []int) int {
	d := -1
	in := map[int]bool{}
	for _, b := range froms {
		s := g.Succs(b)
		if s[0].To < 0 || d >= 0 && s[0].To != d {
			return -1
		}
		d = s[0].To
		in[b] = true
	}
	for _, e := range g.Edges {
		if e.To == d && !in[e.From] {
			return -1
		}
	}
	return d
}

// findExitJump is exitJump.FindStringSubmatch(t), hand-written: the
// expression backtracks from every position of every line of a function
// (a fifth of a run on SQLite); it differs only in taking a vertical
// tab for a space, as the line model's other readers do. It returns the
// match, the jump ("break", "continue", "return" or "goto LABEL") and the
// label, or nil.
func findExitJump(t string) []string {
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case 'b', 'c', 'r', 'g':
		default:
			continue // no keyword starts here
		}
		kw := ""
		for _, w := range [...]string{"break", "continue", "return", "goto"} {
			if strings.HasPrefix(t[i:], w) {
				kw = w
				break
			}
		}
		if kw == "" {
			continue
		}
		// What comes before: the line's start, one of ;{) and spaces,
		// or else and at least one space.
		j := i
		for j > 0 && isSpaceByte(t[j-1]) {
			j--
		}
		start := -1
		switch {
		case i == 0:
			start = 0
		case j > 0 && strings.IndexByte(";{)", t[j-1]) >= 0:
			start = j - 1
		case j < i && j >= 4 && t[j-4:j] == "else" && (j == 4 || !isWordByte(t[j-5])):
			start = j - 4
		}
		if start < 0 {
			continue
		}
		end := i + len(kw)
		if kw != "goto" {
			if end < len(t) && isWordByte(t[end]) {
				continue
			}
			return []string{t[start:end], kw, ""}
		}
		k := end
		for k < len(t) && isSpaceByte(t[k]) {
			k++
		}
		l := k
		for l < len(t) && isWordByte(t[l]) {
			l++
		}
		if k == end || l == k {
			continue
		}
		return []string{t[start:l], t[i:l], t[k:l]}
	}
	return nil
}
