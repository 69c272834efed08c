package linemodel

import (
	"sort"
	"strings"

	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// jumpStmt matches a statement that is only a jump: GCC makes it a goto
// (a void function's `return;` one to its shared return), which ends the
// block of the statements before it.
var jumpStmt = lazyRE(`^(break|continue|return)\s*;|^goto\s+\w+\s*;`)

// emptyStmt matches a source line that holds no statement GCC emits code
// or a location for: a comment, or a macro call that expands to nothing
// (assert under NDEBUG, SQLite's testcase).
var emptyStmt = lazyRE(`^(/\*|\*|//|$)|^\w+\s*\(.*\)\s*;\s*(/\*.*\*/|//.*)?$`)

// leavesStmt matches a statement that leaves: code after it is dead, and
// GCC has no location for a jump written there.
var leavesStmt = lazyRE(`^(break|continue|return|goto)\b`)

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
// out a jmp to the next instruction. So too a block whose jmp goes
// straight to where a jump statement after the end of its branch goes,
// past the nop that holds that statement's row (onlyGotoLocus): in GCC's
// graph the branch falls into the jump's block. GCC puts the goto
// on the block's outgoing arc (its goto_locus), which gcov counts as a
// line of the block, and -O0 emits the jmp under the previous statement's
// row when that arc is not expanded on its own. The statement before must
// end on the jmp's row (endsStmt).
func (m *Model) addMergedJumps(g *cfg.Graph, mf *modelFunc, rs []fnRow, code []byte, base uint64, deadAfter map[int]bool, fi int, source func(string) ([]string, bool)) {
	nops := codeNops(code, base)
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
		// block's. After a call to a function declared not to return, a
		// jump statement is dead: GCC removed it.
		if deadAfter[b] {
			continue
		}
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
		braces := false // crossed the end of a branch
		for l := last.Line + 1; l <= len(src) && l-last.Line <= 16; l++ {
			ref := LineRef{File: last.File, Line: l}
			text := strings.TrimSpace(src[l-1])
			if elseLine.MatchString(text) && (braces || strings.HasPrefix(text, "}")) {
				braces = true
				// The rest of an if's else-if chain: the branch's jump
				// goes past it to the statement after the whole if.
				if l = skipElseChain(src, l); l == 0 {
					break
				}
				continue
			}
			if rowed[ref] {
				if jumpStmt.MatchString(text) && bl.Term == cfg.TermJump &&
					(onlyGotoLocus(g, rs, nops, ref, g.Succs(b)) || braces && jumpsAlike(g, rs, code, base, ref, g.Succs(b))) {
					at := lineAt{line: m.lineKey(ref, fi), addr: bl.Last}
					mf.blocks[b] = append(ls, at)
				}
				break
			}
			if closeBrace.MatchString(text) && !elseAfterJumpIn(m.text(src).codeTrim, l) {
				braces = true
				continue
			}
			if closeBrace.MatchString(text) {
				continue // the join has no way in but this branch
			}
			if braces {
				break // only a jump with a row of its own is read past a branch's end
			}
			if jumpStmt.MatchString(text) {
				at := lineAt{line: m.lineKey(ref, fi), addr: bl.Last}
				mf.blocks[b] = append(ls, at)
				break
			}
			if !emptyStmt.MatchString(text) {
				break
			}
		}
	}
}

// elseLine matches a line that starts an else branch, after the closing
// brace of the branch before it or not.
var elseLine = lazyRE(`^(\}\s*)?else\b`)

// skipElseChain returns the last line of the else branches that start at
// line l (else, else if, with braced blocks), 0 when a branch has no
// braces or is not closed close by.
func skipElseChain(src []string, l int) int {
	col := strings.Index(src[l-1], "else")
	for hops := 0; hops < 64; hops++ {
		end, endCol := closingBraceAfter(src, l, col)
		if end == 0 {
			return 0
		}
		rest := strings.TrimSpace(src[end-1][endCol+1:])
		switch {
		case strings.HasPrefix(rest, "else"):
			l, col = end, endCol+1+strings.Index(src[end-1][endCol+1:], "else")
		case rest == "" && end < len(src) && strings.HasPrefix(strings.TrimSpace(src[end]), "else"):
			l, col = end+1, strings.Index(src[end], "else")
		default:
			return end
		}
	}
	return 0
}

// closingBraceAfter finds the first opening brace at or after column col
// of line l (on l or the next line) and returns the line and column of
// the brace that closes it; 0 when there is none close by.
func closingBraceAfter(src []string, l, col int) (int, int) {
	depth := 0
	opened := false
	for k := l; k <= len(src) && k < l+4000; k++ {
		line := src[k-1]
		start := 0
		if k == l {
			start = max(col, 0)
		}
		for i := start; i < len(line); i++ {
			switch line[i] {
			case '{':
				depth++
				opened = true
			case '}':
				depth--
				if opened && depth == 0 {
					return k, i
				}
			case ';':
				if !opened {
					return 0, 0 // a branch with no braces
				}
			}
		}
		if !opened && k > l {
			return 0, 0
		}
	}
	return 0, 0
}

// jumpsAlike reports whether every row of line ref (a jump statement)
// is a lone jmp to where the one arc of succ goes: -O0 sent the jumps of
// the branches before it straight there.
func jumpsAlike(g *cfg.Graph, rs []fnRow, code []byte, base uint64, ref LineRef, succ []cfg.Edge) bool {
	if len(succ) != 1 || succ[0].To < 0 {
		return false
	}
	n := 0
	for k, r := range rs {
		if r.ref != ref {
			continue
		}
		if r.addr < base || r.addr-base >= uint64(len(code)) {
			return false
		}
		inst, err := symtab.DecodeInst(code[r.addr-base:])
		if err != nil || inst.Op != x86asm.JMP || k+1 < len(rs) && rs[k+1].addr < r.addr+uint64(inst.Len) {
			return false
		}
		rel, ok := inst.Args[0].(x86asm.Rel)
		if !ok || uint64(int64(r.addr)+int64(inst.Len)+int64(rel)) != succ[0].Target {
			return false
		}
		n++
	}
	return n > 0
}

// elseOpens matches a line that ends an if's then block and opens its
// else block.
var elseOpens = lazyRE(`^\}\s*else\s*\{\s*(/\*.*\*/|//.*)?$`)

// elseAfterJump reports whether the closing brace at line end of src ends
// an else block whose then block ends with a jump statement: the code
// after the if is reached only from the else block, which GCC's graph
// merges with it, so a jump statement written after the if is a jump of
// the else block's.
func elseAfterJump(src []string, end int) bool {
	return elseAfterJumpIn(func(l int, comment *bool) string { return strings.TrimSpace(codeText(src[l-1], comment)) }, end)
}

// elseAfterJumpIn is elseAfterJump over code(l, comment), a line's code
// text trimmed (srcText.codeTrim, or codeText of it).
func elseAfterJumpIn(code func(l int, comment *bool) string, end int) bool {
	depth := 0
	comment := false
	for l := end - 1; l >= 1 && end-l <= 64; l-- {
		t := code(l, &comment)
		if depth == 0 && elseOpens.MatchString(t) {
			for k := l - 1; k >= 1; k-- {
				c := false
				if p := code(k, &c); p != "" {
					return leavesStmt.MatchString(p)
				}
			}
			return false
		}
		depth += strings.Count(t, "}") - strings.Count(t, "{")
		if depth < 0 {
			return false
		}
	}
	return false
}

// ifLine matches the line of an if statement, or of an else-if after the
// closing brace of the branch before it.
var ifLine = lazyRE(`^(\}\s*else\s+)?if\s*\(`)

// markElseJumps drops the rows GCC gives the jump that ends an if's then
// branch and goes past its else branches: the gimplifier's goto to the end
// of the if has no location of its own (gimplify_cond_expr,
// gimple_set_do_not_emit_location), so gcov counts no line for it, but
// -O0 emits the jmp (or, where the goto's arc was the one to keep a
// location, a nop at the end of the if) under the row of an if line, back
// above the branch's statements. Such a row is one instruction, a forward
// jmp or a nop, whose line is an if line (ifLine) above the line of the
// row before it, and whose then branch declares no variable (a branch
// that does is a BIND_EXPR, located at its opening brace, and the goto
// takes that location: gcov counts it). code starts at base; src is the
// source of the rows' file.
func markElseJumps(rs []fnRow, code []byte, base uint64, src []string) {
	for k := 1; k < len(rs); k++ {
		r, prev := rs[k], rs[k-1]
		if r.ref.File != prev.ref.File || r.ref.Line >= prev.ref.Line || r.ref.Line < 1 || r.ref.Line > len(src) ||
			prev.addr == r.addr || r.addr < base || r.addr-base >= uint64(len(code)) {
			continue
		}
		if k+1 < len(rs) && rs[k+1].addr == r.addr || !ifLine.MatchString(strings.TrimSpace(src[r.ref.Line-1])) {
			continue
		}
		if text := src[r.ref.Line-1]; declaresFrom(src, r.ref.Line, strings.Index(text, "if")) {
			continue
		}
		inst, err := symtab.DecodeInst(code[r.addr-base:])
		if err != nil || inst.Len == 0 {
			continue
		}
		end := r.addr + uint64(inst.Len)
		if k+1 < len(rs) && rs[k+1].addr < end {
			continue
		}
		switch inst.Op {
		case x86asm.NOP:
			if k+1 < len(rs) && rs[k+1].addr != end {
				continue // more code in the row than the nop
			}
		case x86asm.JMP:
			rel, ok := inst.Args[0].(x86asm.Rel)
			if !ok || rel < 0 {
				continue
			}
		default:
			continue
		}
		rs[k].drop = true
	}
}

// closeBrace matches a line that only ends a block.
var closeBrace = lazyRE(`^\}\s*(/\*.*\*/|//.*)?$`)

// A nopAt reports whether the instruction at a link-time address is a
// one-byte nop.
type nopAt func(addr uint64) bool

// codeNops returns the nopAt of a function's code, which starts at base.
func codeNops(code []byte, base uint64) nopAt {
	return func(a uint64) bool { return a >= base && a-base < uint64(len(code)) && code[a-base] == 0x90 }
}

// onlyGotoLocus reports whether every row of line ref starts a block that
// is one nop and then goes where succ (a block's one arc) goes: the nop
// -O0 emits to hold a goto's location (its goto_locus) on its arc.
func onlyGotoLocus(g *cfg.Graph, rs []fnRow, nops nopAt, ref LineRef, succ []cfg.Edge) bool {
	if len(succ) != 1 || succ[0].To < 0 {
		return false
	}
	n := 0
	for _, r := range rs {
		if r.ref != ref {
			continue
		}
		b, ok := g.BlockAt(r.addr)
		if !ok || g.Blocks[b].Start != r.addr {
			return false
		}
		bl := &g.Blocks[b]
		out := g.Succs(b)
		if len(out) != 1 || out[0].To != succ[0].To || !nops(bl.Start) {
			return false
		}
		switch {
		case bl.Term == cfg.TermJump && bl.Insts == 2, bl.Term == cfg.TermFall && bl.Insts == 1:
		default:
			return false
		}
		n++
	}
	return n > 0
}

// dropJoinJumps takes off the end of a block the line of its forward jmp
// when that jmp has a row of its own naming a jump statement (break,
// continue, goto, return) that its target block starts with: the arc
// into that statement's block (the nop holding its goto_locus) which -O0
// laid out away from its target, the jmp taking the target's location. In
// GCC's graph the arc is no statement of the block it leaves. (A loop's
// first jmp to its condition, on the loop's line, is GCC's own goto.)
func dropJoinJumps(m *Model, g *cfg.Graph, mf *modelFunc, source func(string) ([]string, bool)) {
	for b := range g.Blocks {
		bl := &g.Blocks[b]
		ls := mf.blocks[b]
		n := len(ls)
		if bl.Term != cfg.TermJump || n < 2 || ls[n-1].addr != bl.Last {
			continue
		}
		succ := g.Succs(b)
		if len(succ) != 1 || succ[0].To < 0 || succ[0].Target <= bl.Last {
			continue
		}
		to := mf.blocks[succ[0].To]
		if len(to) == 0 || to[0].line != ls[n-1].line || to[0].addr != g.Blocks[succ[0].To].Start {
			continue
		}
		ref := m.keys[ls[n-1].line]
		if src, ok := source(ref.File); ok && ref.Line >= 1 && ref.Line <= len(src) && jumpStmt.MatchString(strings.TrimSpace(src[ref.Line-1])) {
			mf.blocks[b] = ls[:n-1]
		}
	}
}

// liftOperandTests gives the test and branch after a call GCC does not
// end its block with the line of the code before it. GCC ends a block
// after a call for gcov (its fake arc to the exit) except after a call to
// a builtin that cannot throw (strstr, malloc, memcpy: see
// noSplitCallees): in `a ||\n strstr(p, s) != 0` the call's block then
// runs on to the test, on the operator's line above but after the call's
// line, and gcov lists the block under its highest line. The cfg splits
// after every call, so the row of the test, the operator's line, counted
// the block as entered again. Only a compare and a conditional jump right
// after such a call is moved: what GCC's block would hold. callee names a
// call's target (nil: no names known). code starts at base.
func liftOperandTests(rs []fnRow, code []byte, base uint64, g *cfg.Graph, callee func(uint64) string) {
	if callee == nil {
		return
	}
	var ins [][]int32
	preds := func() [][]int32 {
		if ins == nil {
			ins = predEdges(g)
		}
		return ins
	}
	for k := 1; k < len(rs); k++ {
		r, prev := rs[k], rs[k-1]
		if r.drop || prev.drop || r.ref.File != prev.ref.File || r.ref.Line >= prev.ref.Line || prev.addr >= r.addr ||
			r.addr < base || r.addr-base >= uint64(len(code)) {
			continue
		}
		if !afterNoSplitCall(g, preds, r.addr, prev.addr, code, base, callee) {
			continue
		}
		end := base + uint64(len(code))
		if k+1 < len(rs) {
			end = rs[k+1].addr
		}
		if testThenBranch(code[r.addr-base : end-base]) {
			rs[k].ref.Line = prev.ref.Line
		}
	}
}

// noSplitCallees are the C library functions GCC knows as builtins that
// cannot throw (or as pure), whose calls end no block of gcov's: GCC's
// builtins.def (the NOTHROW_LEAF attribute lists), and glibc's pure
// declarations. printf, puts and their kin are builtins that may throw
// (cancellation points) and do end a block.
var noSplitCallees = map[string]bool{
	"malloc": true, "calloc": true, "realloc": true, "free": true, "strdup": true, "strndup": true,
	"memcpy": true, "memmove": true, "memset": true, "memcmp": true, "memchr": true, "bcmp": true, "bzero": true,
	"strcpy": true, "strncpy": true, "stpcpy": true, "strcat": true, "strncat": true, "strcmp": true, "strncmp": true,
	"strlen": true, "strnlen": true, "strchr": true, "strrchr": true, "strstr": true, "strspn": true, "strcspn": true,
	"strpbrk": true, "strcasecmp": true, "strncasecmp": true, "index": true, "rindex": true,
	"abs": true, "labs": true, "llabs": true, "toupper": true, "tolower": true,
	"sqrt": true, "sin": true, "cos": true, "tan": true, "exp": true, "log": true, "log10": true, "pow": true,
	"floor": true, "ceil": true, "fabs": true, "fmod": true, "atan": true, "atan2": true,
	"atoi": true, "atol": true, "atoll": true,
}

// afterNoSplitCall reports whether the code at addr starts a block whose
// one arc in is the return of a direct call, ending the block holding
// prev, to one of noSplitCallees. preds returns predEdges of g.
func afterNoSplitCall(g *cfg.Graph, preds func() [][]int32, addr, prev uint64, code []byte, base uint64, callee func(uint64) string) bool {
	b, ok := g.BlockAt(addr)
	p, okPrev := g.BlockAt(prev)
	if !ok || !okPrev || g.Blocks[b].Start != addr || g.Blocks[p].Term != cfg.TermCall {
		return false
	}
	n := 0
	for _, k := range preds()[b] {
		if e := g.Edges[k]; e.From != p || e.Kind != cfg.Return {
			return false
		}
		n++
	}
	last := g.Blocks[p].Last
	if n != 1 || last < base || last-base >= uint64(len(code)) {
		return false
	}
	inst, err := symtab.DecodeInst(code[last-base:])
	if err != nil || inst.Op != x86asm.CALL {
		return false
	}
	rel, ok := inst.Args[0].(x86asm.Rel)
	if !ok {
		return false
	}
	name := callee(uint64(int64(last) + int64(inst.Len) + int64(rel)))
	if at := strings.IndexByte(name, '@'); at >= 0 {
		name = name[:at]
	}
	return noSplitCallees[name]
}

// testThenBranch reports whether code is one compare or test and then a
// conditional jump, and nothing else.
func testThenBranch(code []byte) bool {
	inst, err := symtab.DecodeInst(code)
	if err != nil || inst.Len == 0 || inst.Len >= len(code) || inst.Op != x86asm.TEST && inst.Op != x86asm.CMP {
		return false
	}
	jcc, err := symtab.DecodeInst(code[inst.Len:])
	return err == nil && inst.Len+jcc.Len == len(code) && isJcc(jcc.Op)
}

// isJcc reports whether op is a conditional jump.
func isJcc(op x86asm.Op) bool {
	switch op {
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG, x86asm.JGE, x86asm.JL, x86asm.JLE,
		x86asm.JNE, x86asm.JNO, x86asm.JNP, x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JS:
		return true
	}
	return false
}

// noReturnCalls returns the blocks of g that end in a direct call to a
// function DWARF declares never to return (Model.noReturn). code starts
// at base.
func (m *Model) noReturnCalls(g *cfg.Graph, code []byte, base uint64) map[int]bool {
	if len(m.noReturn) == 0 {
		return nil
	}
	var out map[int]bool
	for b, bl := range g.Blocks {
		if bl.Term != cfg.TermCall || bl.Last < base || bl.Last-base >= uint64(len(code)) {
			continue
		}
		inst, err := symtab.DecodeInst(code[bl.Last-base:])
		if err != nil || inst.Op != x86asm.CALL {
			continue
		}
		if rel, ok := inst.Args[0].(x86asm.Rel); ok && m.noReturn[uint64(int64(bl.Last)+int64(inst.Len)+int64(rel))] {
			if out == nil {
				out = make(map[int]bool)
			}
			out[b] = true
		}
	}
	return out
}

// addArmReturns gives the return of a call in an arm of a conditional
// expression spread over lines (`b = c ? f(x) :\n g(x);`) a block of the
// expression's line. GCC assigns the call's value to the expression's
// temporary in the block after the call (GCC ends a block after a call),
// located on the line of the whole expression, so gcov counts that line
// once more for every return of a call on a later line; -O0 leaves only a
// jmp to the join, or nothing. The join's first row names the
// expression's line, above the call's.
func (m *Model) addArmReturns(g *cfg.Graph, mf *modelFunc, rs []fnRow, source func(string) ([]string, bool)) {
	claimed := make(map[int]bool)
	for _, lb := range mf.labels {
		for _, k := range lb.edges {
			claimed[k] = true
		}
	}
	for k, e := range g.Edges {
		if e.Kind != cfg.Return || e.From < 0 || e.To < 0 {
			continue
		}
		// The arc into the join: the return itself, or the lone jmp's
		// after it (whose row, the call's line, stays the call's).
		join, arc := e.To, k
		if x := &g.Blocks[e.To]; x.Term == cfg.TermJump && x.Insts == 1 && len(g.Succs(e.To)) == 1 {
			join, arc = g.Succs(e.To)[0].To, g.SuccIndex(e.To)
		}
		if join < 0 {
			continue
		}
		jl, cl := mf.blocks[join], mf.blocks[e.From]
		if claimed[arc] || len(jl) == 0 || len(cl) == 0 || jl[0].addr != g.Blocks[join].Start {
			continue
		}
		expr, call := m.keys[jl[0].line], m.keys[cl[len(cl)-1].line]
		if expr.File != call.File || expr.Line >= call.Line {
			continue
		}
		src, ok := source(expr.File)
		if !ok || expr.Line > len(src) || call.Line > len(src) || !strings.Contains(src[expr.Line-1], "?") ||
			!armBetween(src, expr.Line, call.Line) {
			continue
		}
		claimed[arc] = true
		mf.labels = append(mf.labels, labelBlock{lines: []int32{jl[0].line}, edges: []int{arc}})
	}
}

// armBetween reports whether the lines from expr to call read as one
// conditional expression's arms: each line before call ends with ':'
// (an arm's end), comments aside.
func armBetween(src []string, expr, call int) bool {
	comment := false
	for l := expr; l < call; l++ {
		t := strings.TrimSpace(codeText(src[l-1], &comment))
		if !strings.HasSuffix(t, ":") {
			return false
		}
	}
	return true
}

// CallEndsBlock reports whether GCC ends a block after a call to the
// function at target (link-time address), as it does for gcov after
// every call but those to the builtins of noSplitCallees: gcov lists a
// call (its "call N returned" line) only where GCC ended the block.
// Unknown targets end one.
func (m *Model) CallEndsBlock(target uint64) bool {
	if m == nil || m.callName == nil {
		return true
	}
	name := m.callName(target)
	if at := strings.IndexByte(name, '@'); at >= 0 {
		name = name[:at]
	}
	return !noSplitCallees[name]
}
