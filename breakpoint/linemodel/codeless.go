package linemodel

import (
	"slices"
	"strings"

	"github.com/patchprof/patchprof/cfg"
)

// Statements GCC keeps (so gcov counts them) that -O0 emits no
// instruction for, so no line-table row names them.

// codeless matches a statement GCC keeps in its graph (so gcov counts
// it) but emits no instruction for on x86-64: va_end (and emptyIf's).
var codeless = lazyRE(`^(__builtin_)?va_end\s*\(.*\);`)

// ifOpen matches an if statement's line that opens its block.
var ifOpen = lazyRE(`^if\s*\(.*\)\s*\{\s*$`)

// ifOneLine matches an if statement whose block opens and closes on its
// line.
var ifOneLine = lazyRE(`^if\s*\(.*\)\s*\{[^{}]*\}\s*$`)

// emptyIf reports whether line l (no code) is an if whose block, closed
// on its line or within a few lines with no else, has no code either (a macro that
// expands to nothing), and whose condition reads memory through a pointer
// (-> or []). GCC keeps such a condition as a statement of its own (the
// load may trap) though -O0 emits no instruction for it; a condition on
// locals or constants leaves no statement.
func emptyIf(tx *srcText, l int, coded map[int]bool) bool {
	src := tx.src
	t := tx.trim(l)
	// Both forms begin with if (ifOneLine, ifOpen): that test first, for
	// inDeadIf looks up to 64 lines above.
	if !strings.HasPrefix(t, "if") || !strings.Contains(t, "->") && !strings.Contains(t, "[") || inDeadIf(tx, l, coded) {
		return false
	}
	if tx.is(l, predIfOneLine) {
		return l == len(src) || !strings.HasPrefix(strings.TrimSpace(src[l]), "}") && !strings.HasPrefix(strings.TrimSpace(src[l]), "else")
	}
	if !tx.is(l, predIfOpen) {
		return false
	}
	for k := l + 1; k <= len(src) && k <= l+8; k++ {
		if coded[k] {
			return false
		}
		if strings.TrimSpace(src[k-1]) == "}" {
			return k == len(src) || !strings.HasPrefix(strings.TrimSpace(src[k]), "else")
		}
	}
	return false
}

// boolNot matches an if on the negation of one name that opens its block.
var boolNot = lazyRE(`^if\s*\(\s*!\s*([A-Za-z_]\w*)\s*\)\s*\{\s*$`)

// emptyBoolNot reports whether line l (no code) is a C++ if on the
// negation of a bool the function declares above it (lines from lo),
// whose block, closed within a few lines with no else, has no code: g++
// gimplifies `!b` on a bool to a statement of its own (`_1 = ~b`, at the
// operator), which stays when the empty if goes, and -O0 emits nothing
// for it. (`!p` on a pointer or an int is a comparison, which goes with
// the if, as in C.)
func emptyBoolNot(src []string, l, lo int, coded map[int]bool) bool {
	comment := false
	sm := boolNot.FindStringSubmatch(strings.TrimSpace(codeText(src[l-1], &comment)))
	if sm == nil {
		return false
	}
	declared := false
	for k := max(lo, 1); k < l && !declared; k++ {
		t := src[k-1]
		for i := strings.Index(t, "bool"); i >= 0 && !declared; {
			if wordAt(t, i) == "bool" && wordAt(t, skipSpace(t, i+4)) == sm[1] {
				declared = true
			}
			if j := strings.Index(t[i+4:], "bool"); j >= 0 {
				i += 4 + j
			} else {
				i = -1
			}
		}
	}
	if !declared {
		return false
	}
	for k := l + 1; k <= len(src) && k <= l+8; k++ {
		if coded[k] {
			return false
		}
		if strings.TrimSpace(src[k-1]) == "}" {
			return k == len(src) || !strings.HasPrefix(strings.TrimSpace(src[k]), "else")
		}
	}
	return false
}

// inDeadIf reports whether line l is in the block of an if with no code
// whose condition reads no memory (zlib's `if (sizeof(int) <= 2) {`): a
// condition GCC folds to false, which takes the block's statements with
// it, so they are no statements of GCC's.
func inDeadIf(tx *srcText, l int, coded map[int]bool) bool {
	k, t := openerAboveIn(tx.codeTrim, l, 64)
	return k > 0 && !coded[k] && ifLine.MatchString(t) && !strings.Contains(t, "->") && !strings.Contains(t, "[")
}

// elseOpen matches the line that closes an if's block and opens its else
// block.
var elseOpen = lazyRE(`^\}\s*else\s*\{\s*$`)

// emptyIfElse reports whether line l (no code) is an if whose block and
// else block, closed within a few lines with no further else, both have no
// code (macros that expand to nothing). GCC keeps its condition as an
// expression statement of the block before it, even on locals, though -O0
// emits no instruction for it.
func emptyIfElse(tx *srcText, l int, coded map[int]bool) bool {
	src := tx.src
	if !tx.is(l, predIfOpen) {
		return false
	}
	inElse := false
	for k := l + 1; k <= len(src) && k <= l+16; k++ {
		if coded[k] {
			return false
		}
		t := tx.trim(k)
		if kind, _ := directive(t); kind != ppNone || strings.Contains(t, "{") && !elseOpen.MatchString(t) {
			return false
		}
		switch {
		case !inElse && elseOpen.MatchString(t):
			inElse = true
		case t == "}" && !inElse:
			return false
		case t == "}":
			return k == len(src) || !strings.HasPrefix(strings.TrimSpace(src[k]), "else")
		}
	}
	return false
}

// afterAbove returns where a codeless statement at line l of file goes in
// rs when it belongs to the block before it: after the last row of the
// nearest line above it with code, at that row's address (the next row
// may start another block); -1 when there is none.
func afterAbove(rs []fnRow, file string, l int) int {
	above := 0
	for _, r := range rs {
		if r.ref.File == file && r.ref.Line < l && r.ref.Line > above {
			above = r.ref.Line
		}
	}
	last := -1
	for k, r := range rs {
		if r.ref.File == file && r.ref.Line == above {
			last = k
		}
	}
	if last < 0 {
		return -1
	}
	return last + 1
}

// codelessEveryLine has addCodeless visit every line at any level, as it
// does at -O0: the reference its tests compare the shorter visit with.
var codelessEveryLine = false

// addCodeless gives the codeless statements written between a function's
// rows (in its first row's file) a row of their own at the address of the
// next statement below them, which is where GCC's statement order puts
// them. o0 says the function is GCC -O0 code, where an assignment with no
// row is one that compiles to nothing (idleAssign): an optimizer drops
// and moves statements. cpp says it is C++ (emptyBoolNot).
func (m *Model) addCodeless(rs []fnRow, source func(string) ([]string, bool), o0, cpp bool) []fnRow {
	if len(rs) == 0 {
		return rs
	}
	file := rs[0].ref.File
	src, ok := source(file)
	if !ok {
		return rs
	}
	tx := m.text(src)
	lo, hi := rs[0].ref.Line, rs[0].ref.Line
	coded := map[int]bool{}
	for _, r := range rs {
		if r.ref.File == file {
			lo, hi = min(lo, r.ref.Line), max(hi, r.ref.Line)
			coded[r.ref.Line] = true
		}
	}
	// The function's lines with comments and literals blanked, read once
	// (idleAssign's, at -O0).
	var texts []string
	if o0 {
		texts = make([]string, 0, min(hi, len(src))-lo+1)
		comment := false
		for k := lo; k <= hi && k <= len(src); k++ {
			_, t := tx.code(k, &comment)
			texts = append(texts, t)
		}
	}
	text := func(k int) string {
		if k < lo || k-lo >= len(texts) {
			return ""
		}
		return texts[k-lo]
	}
	// Which lines to look at: every one at -O0; elsewhere only those
	// whose text a rule below can take (codelessLines), for at -O2 a
	// function's range spans the lines of what is inlined into it, most
	// of its file.
	var cands []int32
	next := lo + 1
	few := !o0 && !codelessEveryLine
	if few {
		cands = linesFrom(tx.codelessLines(cpp), lo+1)
	}
	depth := 0 // preprocessor conditionals open in the function
	for l := lo + 1; l < hi && l <= len(src); l = next {
		next = l + 1
		if few {
			if len(cands) == 0 || int(cands[0]) >= hi {
				break
			}
			l, cands = int(cands[0]), cands[1:]
			next = l + 1
			if l > len(src) {
				break
			}
		}
		switch kind, _ := directive(tx.trim(l)); kind {
		case ppIf:
			depth++
		case ppEndif:
			depth = max(depth-1, 0)
		}
		// An if with no code inside a conditional may be compiled out.
		if !coded[l] && depth == 0 && emptyIfElse(tx, l, coded) {
			if k := afterAbove(rs, file, l); k >= 0 {
				rs = slices.Insert(rs, k, fnRow{addr: rs[k-1].addr, ref: LineRef{File: file, Line: l}})
			}
			continue
		}
		if coded[l] || !tx.is(l, predCodeless) && (depth > 0 || !emptyIf(tx, l, coded) && !(cpp && emptyBoolNot(tx.src, l, lo, coded)) && !(o0 && idleAssign(text, l, lo, hi, coded))) {
			continue
		}
		// The row of the nearest line below with code.
		below := -1
		for k, r := range rs {
			if r.ref.File == file && r.ref.Line > l && (below < 0 || r.ref.Line < rs[below].ref.Line) {
				below = k
			}
		}
		if below < 0 {
			continue
		}
		rs = slices.Insert(rs, below, fnRow{addr: rs[below].addr, ref: LineRef{File: file, Line: l}})
	}
	return rs
}

// assignLine matches a line that is one whole assignment to a variable or
// a member or element of one (x = ..., p->f |= ..., a[i] += ...): no
// declaration (a type before the name), no second statement, no brace.
var assignLine = lazyRE(`^[A-Za-z_]\w*((\.|->)\s*[A-Za-z_]\w*|\[[^\]\[]*\])*\s*(<<|>>|[-+*/%&|^])?=[^=][^;{}]*;$`)

// fillerLine matches a call statement alone on its line (a macro that
// expands to nothing when it has no row: SQLite's debug hooks).
var fillerLine = lazyRE(`^[A-Za-z_]\w*\s*\([^;{}]*\)\s*;$`)

// nextStatement matches the start of a line that begins a statement no
// codeless assignment right above it can share a block with: a label, a
// loop's header, a closing brace, an else.
var notStraight = lazyRE(`^(\}|case\b|default\b|else\b|while\b|for\b|do\b|switch\b|[A-Za-z_]\w*\s*:[^:])`)

// idleAssign reports whether line l (no code) is an assignment GCC keeps
// as a statement but -O0 compiles to nothing: one a macro makes a
// self-assignment (`flags |= O_RDONLY` with O_RDONLY 0, `n = ROUND8P(n)`
// with ROUND8P(x) (x)). It must sit in straight-line code: the nearest
// code above it ends a statement or opens a block (not a switch's), or
// a block closes above it; the nearest code below is a plain statement;
// only blank lines, comments and row-less call statements lie between. Its statement is then in the block of the next
// statement, where addCodeless puts it. A declaration (`static int x =
// 0;`) never matches. text(k) is line k with comments and literals
// blanked, trimmed; "" outside [lo, hi].
func idleAssign(text func(int) string, l, lo, hi int, coded map[int]bool) bool {
	if t := text(l); !strings.HasSuffix(t, ";") || !strings.Contains(t, "=") || !assignLine.MatchString(t) {
		return false
	}
	above := false
	for k := l - 1; k >= lo; k-- {
		t := text(k)
		if coded[k] || t == "}" {
			above = strings.HasSuffix(t, ";") || t == "}" || strings.HasSuffix(t, "{") && !switchLine.MatchString(t)
			break
		}
		if t != "" && !fillerLine.MatchString(t) {
			return false
		}
	}
	if !above {
		return false
	}
	for k := l + 1; k <= hi; k++ {
		t := text(k)
		if coded[k] {
			return !notStraight.MatchString(t)
		}
		if t != "" && !fillerLine.MatchString(t) {
			return false // a directive, a label, a brace, another statement
		}
	}
	return false
}

// addCodelessReturns takes a codeless statement (va_end) off the block it
// was put in when that block is a join the call right above the statement
// returns into: GCC ends a block after a call (gcov's fake arc to the
// exit), so the statement after it begins the block of the call's return,
// which -O0 leaves no code of its own when nothing follows but the
// scope's end. The statement becomes a block of GCC's on the call's
// return arc alone (a labelBlock), not a line of every way into the join.
func (m *Model) addCodelessReturns(g *cfg.Graph, mf *modelFunc, source func(string) ([]string, bool)) {
	claimed := make(map[int]bool)
	for _, lb := range mf.labels {
		for _, k := range lb.edges {
			claimed[k] = true
		}
	}
	var preds map[int][]int // per block, the edges into it; made on first need
	for b := range g.Blocks {
		ls := mf.blocks[b]
		if len(ls) < 2 || ls[0].addr != g.Blocks[b].Start {
			continue
		}
		ref := m.keys[ls[0].line]
		src, ok := source(ref.File)
		if !ok || ref.Line < 1 || ref.Line > len(src) || !strings.Contains(src[ref.Line-1], "va_end") ||
			!codeless.MatchString(strings.TrimSpace(src[ref.Line-1])) {
			continue
		}
		if preds == nil {
			preds = make(map[int][]int)
			for k, e := range g.Edges {
				if e.To >= 0 {
					preds[e.To] = append(preds[e.To], k)
				}
			}
		}
		ret := -1
		for _, k := range preds[b] {
			e := g.Edges[k]
			from := mf.blocks[e.From]
			if e.Kind != cfg.Return || claimed[k] || len(from) == 0 {
				continue
			}
			if call := m.keys[from[len(from)-1].line]; call.File == ref.File && call.Line < ref.Line {
				ret = k
			}
		}
		if ret < 0 || len(preds[b]) < 2 {
			continue
		}
		claimed[ret] = true
		mf.blocks[b] = ls[1:]
		mf.labels = append(mf.labels, labelBlock{lines: []int32{ls[0].line}, edges: []int{ret}})
	}
}
