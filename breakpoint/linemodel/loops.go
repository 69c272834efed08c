package linemodel

import (
	"strings"

	"github.com/patchprof/patchprof/cfg"
)

// foreverLoop matches the header of a loop with no condition, `for (;;)`
// or `while (1)`, with the body's opening brace or not.
var foreverLoop = lazyRE(`^(for\s*\(\s*;\s*;\s*\)|while\s*\(\s*(1|true)\s*(/\*.*?\*/\s*)?\))\s*(\{)?\s*(/\*.*|//.*)?$`)

// namedLoop matches the header of a while loop whose condition is one
// name, as foreverLoop's groups: `while (True)`, a macro for a constant
// that GCC folds (genericize_c_loop drops a condition integer_nonzerop
// holds), leaving a loop with no condition, or a variable, tested on the
// header's line.
var namedLoop = lazyRE(`^(while\s*\(\s*([A-Za-z_]\w*)\s*(/\*.*?\*/\s*)?\))\s*(\{)?\s*(/\*.*|//.*)?$`)

// tested returns the lines of file that hold a conditional jump's test:
// the last line of each block ending in one.
func (m *Model) tested(g *cfg.Graph, mf *modelFunc, file string) map[int]bool {
	out := make(map[int]bool)
	for b, bl := range g.Blocks {
		if ls := mf.blocks[b]; bl.Term == cfg.TermCond && len(ls) > 0 {
			if ref := m.keys[ls[len(ls)-1].line]; ref.File == file {
				out[ref.Line] = true
			}
		}
	}
	return out
}

// declLine matches a line that starts a declaration: a type (with
// qualifiers) and a name, then `=`, `;`, `,` or an array bound. The rules
// ask isDeclLine, the same match hand-written.
var declLine = lazyRE(`^((const|volatile|unsigned|signed|struct|union|enum|static|register)\s+)*[A-Za-z_]\w*[\s*]+[A-Za-z_]\w*\s*(\[[^\]]*\]\s*)?[=;,\[]`)

// declQualifiers are the words declLine takes before a declaration's type.
var declQualifiers = [...]string{"const", "volatile", "unsigned", "signed", "struct", "union", "enum", "static", "register"}

// isDeclLine is declLine.MatchString(t), hand-written: the expression
// backtracks over the line of every statement of every scope (a
// fourteenth of the model's time on SQLite). Each of its pieces ends
// where the next one's first byte is one it does not take, so it matches
// one way at each count of qualifiers: after a name, whitespace or *, a
// name, whitespace, then one of =;,[ (an array bound starts with [ too).
// Its \s is RE2's, without the vertical tab.
func isDeclLine(t string) bool {
	for i := 0; ; {
		if declAt(t[i:]) {
			return true
		}
		n := qualifierAt(t[i:])
		if n == 0 {
			return false
		}
		i += n
	}
}

// declAt is declLine after its qualifiers, matched at the start of t.
func declAt(t string) bool {
	i := identEnd(t, 0)
	if i == 0 {
		return false
	}
	j := i
	for j < len(t) && (t[j] == '*' || isRESpace(t[j])) {
		j++
	}
	if j == i {
		return false
	}
	k := identEnd(t, j)
	if k == j {
		return false
	}
	for k < len(t) && isRESpace(t[k]) {
		k++
	}
	return k < len(t) && strings.IndexByte("=;,[", t[k]) >= 0
}

// qualifierAt returns the length of one of declQualifiers at the start
// of t with the whitespace after it, 0 when there is none.
func qualifierAt(t string) int {
	for _, q := range declQualifiers {
		if len(t) > len(q) && t[:len(q)] == q && isRESpace(t[len(q)]) {
			n := len(q) + 1
			for n < len(t) && isRESpace(t[n]) {
				n++
			}
			return n
		}
	}
	return 0
}

// identEnd returns the end of the name [A-Za-z_]\w* at t[i:], i when
// none starts there.
func identEnd(t string, i int) int {
	if i >= len(t) || !(t[i] == '_' || isLetter(t[i])) {
		return i
	}
	for i++; i < len(t) && isWordByte(t[i]); i++ {
	}
	return i
}

// isRESpace reports whether c is RE2's \s: [\t\n\f\r ].
func isRESpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// voidAssert matches an assert statement, which under NDEBUG is still an
// expression statement, ((void)0) [C11 7.2], with a location of its own.
var voidAssert = lazyRE(`^assert\s*\(`)

// emptyMacro matches a line that is one call of a function-like macro,
// which, if the line has no code and it is no assert, expands to nothing:
// no statement at all.
var emptyMacro = lazyRE(`^\w+\s*\(.*\)\s*;\s*(/\*.*\*/|//.*)?$`)

// notType matches the keywords that can start a line declLine would
// otherwise take for a declaration (`return x;`).
var notType = lazyRE(`^(return|goto|case|else|do|sizeof|break|continue)\b`)

// A latch is the block GCC makes of the jump back to the top of a loop
// with no condition (for (;;), while (1)): a goto whose location is the
// body's first statement, or, when the body declares variables (its
// BIND_EXPR), the body's opening brace; GCC's C front end,
// genericize_c_loop. Every arc back to the loop's head runs through it
// (continue statements, and the branches -O0 jump threading sent straight
// to the head), so gcov counts that line once per time round, even where
// the machine code has no jmp left or the jmp has the row of no line.
type latch struct {
	line int32 // model key of the goto's line
	head int   // the block the body starts with
	// outer is set on the latch of a loop whose body starts with a loop
	// sharing its head: only the arcs from the blocks in outer run
	// through it, the inner loop's go straight back.
	outer map[int]bool
}

// addLatches finds the function's loops with no condition in its source
// (file, lines lo to hi) and gives each a latch; a jmp back to the head
// that has the latch's line is no longer a line of its block.
func (m *Model) addLatches(g *cfg.Graph, mf *modelFunc, rs []fnRow, fi int, source func(string) ([]string, bool)) {
	file, src, ok := funcSource(rs, source)
	if !ok {
		return
	}
	lo, hi, firstAt := rowSpan(rs, file)
	text := func(l int) string { return strings.TrimSpace(src[l-1]) }
	var tests map[int]bool // made on first need
	// forever reads a loop with no condition at line l: foreverLoop, or a
	// while on one name no conditional jump tests.
	forever := func(l int) []string {
		if sm := foreverLoop.FindStringSubmatch(text(l)); sm != nil {
			return sm
		}
		sm := namedLoop.FindStringSubmatch(text(l))
		if sm == nil {
			return nil
		}
		if tests == nil {
			tests = m.tested(g, mf, file)
		}
		if tests[l] {
			return nil
		}
		// A loop in a branch compiled out (SQLite's SQLITE_DEBUG checks)
		// has no code in its body either.
		end := closingLine(src, l)
		for f := l + 1; f < end; f++ {
			if _, ok := firstAt[f]; ok {
				return sm
			}
		}
		return nil
	}
	// Only the lines forever can take (loopLines).
	for _, l32 := range linesFrom(m.text(src).loopLines(), lo) {
		l := int(l32)
		if l >= hi || l > len(src) {
			break
		}
		sm := forever(l)
		if sm == nil {
			continue
		}
		brace := l
		next := nextStmtLine(src, l+1)
		if sm[4] == "" {
			if next == 0 || !strings.HasPrefix(text(next), "{") || strings.TrimSpace(strings.TrimPrefix(text(next), "{")) != "" {
				continue // a body without braces: not read
			}
			brace = next
			next = nextStmtLine(src, brace+1)
		}
		goTo := 0
		if declaresAt(src, brace) {
			goTo = brace
		}
		for stmt := next; goTo == 0 && stmt > 0; stmt = nextStmtLine(src, stmt+1) {
			t := text(stmt)
			if kind, _ := directive(t); kind != ppNone {
				continue
			}
			if strings.HasPrefix(t, "}") {
				break // an empty body
			}
			if _, coded := firstAt[stmt]; coded || voidAssert.MatchString(t) || !emptyMacro.MatchString(t) {
				goTo = stmt
			}
			// Otherwise a macro that expands to nothing: no statement.
		}
		if goTo == 0 {
			continue
		}
		// A body that starts with a loop with no condition of its own (or a
		// do loop): that statement has no location for the goto to take,
		// which takes the outer loop's line, and both loops start at one
		// head.
		innerEnd := 0
		if goTo == next && (forever(goTo) != nil || doLoop.MatchString(text(goTo))) {
			if innerEnd = closingLine(src, goTo); innerEnd == 0 {
				continue
			}
			goTo = l
		}
		// The head: where the first line below the header with code
		// starts.
		head := -1
		for f := l + 1; f <= hi; f++ {
			if a, ok := firstAt[f]; ok {
				if b, ok := g.BlockAt(a); ok && g.Blocks[b].Start == a {
					head = b
				}
				break
			}
		}
		if head < 0 || len(mf.blocks[head]) == 0 {
			continue
		}
		ref := LineRef{File: file, Line: goTo}
		key := m.lineKey(ref, fi)
		if l, ok := headLine(mf, head); ok && l == key {
			continue // the jmp back closes the loop on its head's line (closesLoop)
		}
		// The jmps closing the loop on its line: the outer loop's own when
		// two loops share the head.
		closing := make(map[int]bool)
		for b, bl := range g.Blocks {
			ls := mf.blocks[b]
			if n := len(ls); n > 0 && ls[n-1].line == key && ls[n-1].addr == bl.Last && bl.Term == cfg.TermJump && jumpsTo(g, b, head) {
				mf.blocks[b] = ls[:n-1]
				closing[b] = true
			}
		}
		lt := latch{line: key, head: head}
		if innerEnd > 0 {
			lt.outer = make(map[int]bool)
			for _, e := range g.Edges {
				if e.To != head || e.From < 0 || g.Blocks[e.From].Start < g.Blocks[head].Start {
					continue
				}
				if closing[e.From] {
					// The outer loop's closing jmp (its continue's
					// target), a line of none once its row is taken.
					lt.outer[e.From] = true
					continue
				}
				if ls := mf.blocks[e.From]; len(ls) > 0 {
					if ref := m.keys[ls[len(ls)-1].line]; ref.File == file && ref.Line > innerEnd {
						lt.outer[e.From] = true
					}
				}
			}
		}
		mf.latches = append(mf.latches, lt)
	}
}

// headLine returns the line a loop's head block starts with, past a
// case label put before it (addCaseLabels): the line a jmp closing the
// loop carries.
func headLine(mf *modelFunc, b int) (int32, bool) {
	ls := mf.blocks[b]
	if mf.caseHead[b] && len(ls) > 1 {
		return ls[1].line, true
	}
	if len(ls) == 0 {
		return 0, false
	}
	return ls[0].line, true
}

// doLoop matches the header of a do loop.
var doLoop = lazyRE(`^do\s*(\{\s*)?(/\*.*|//.*)?$`)

// closingLine returns the line of the brace closing the block opened on
// line open (the first brace at or after it), 0 when not found close by.
func closingLine(src []string, open int) int {
	depth := 0
	comment := false
	for l := open; l <= len(src) && l < open+4000; l++ {
		t := codeText(src[l-1], &comment)
		for i := 0; i < len(t); i++ {
			switch t[i] {
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					return l
				}
			}
		}
	}
	return 0
}

// jumpsTo reports whether block b's one arc goes to block to.
func jumpsTo(g *cfg.Graph, b, to int) bool {
	succ := g.Succs(b)
	return len(succ) == 1 && succ[0].To == to
}

// declaresAt reports whether the block whose opening brace is on line
// brace declares a variable of its own: a line at its top level that
// starts with a declaration (GCC then wraps the block in a BIND_EXPR,
// located at the brace).
func declaresAt(src []string, brace int) bool {
	return declaresFrom(src, brace, 0)
}

// declaresFrom is declaresAt reading line brace from byte col on (past
// the closing brace of an else's first branch).
func declaresFrom(src []string, brace, col int) bool {
	depth := 0
	comment := false
	for l := brace; l <= len(src) && l < brace+4000; l++ {
		line := src[l-1]
		if l == brace {
			line = line[min(col, len(line)):]
		}
		if l > brace && depth == 1 && !comment {
			t := strings.TrimSpace(line)
			if mayDeclare(t) && isDeclLine(t) && !notType.MatchString(t) {
				return true
			}
		}
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch {
			case comment:
				if c == '*' && i+1 < len(line) && line[i+1] == '/' {
					comment = false
					i++
				}
			case c == '/' && i+1 < len(line) && line[i+1] == '*':
				comment = true
				i++
			case c == '/' && i+1 < len(line) && line[i+1] == '/':
				i = len(line)
			case c == '"' || c == '\'':
				// Skip the literal.
				for i++; i < len(line) && line[i] != c; i++ {
					if line[i] == '\\' {
						i++
					}
				}
			case c == '{':
				depth++
			case c == '}':
				depth--
				if depth == 0 {
					return false
				}
			}
		}
	}
	return false
}

// nextStmtLine returns the first line from l on that is not blank and not
// a comment, 0 when there is none close by.
func nextStmtLine(src []string, from int) int {
	for l := from; l <= len(src) && l < from+64; l++ {
		t := strings.TrimSpace(src[l-1])
		if t == "" || strings.HasPrefix(t, "//") || strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*") {
			continue
		}
		return l
	}
	return 0
}

// declOnLoopHead moves the declarator line of a function whose body
// starts with a loop that has nothing to do at its top (headFirst) from
// the prologue's block to the loop head's. GCC's first block starts at
// the loop's label, so gcov lists the function's line (the entry) on a
// block the loop's back edges enter too: the line counts every pass,
// and owns no block. entry is the function's first address; decl the
// model key of its declarator line.
func declOnLoopHead(m *Model, g *cfg.Graph, mf *modelFunc, entry uint64, decl int32, source func(string) ([]string, bool)) {
	b0, ok := g.BlockAt(entry)
	if !ok || len(mf.blocks[b0]) != 1 || mf.blocks[b0][0].line != decl {
		return
	}
	out := g.Succs(b0)
	if len(out) != 1 || out[0].To < 0 {
		return
	}
	h := out[0].To
	back := false
	for _, e := range g.Edges {
		back = back || e.To == h && e.From != b0
	}
	ls := mf.blocks[h]
	if !back || len(ls) == 0 {
		return
	}
	ref, top := m.keys[ls[0].line], m.keys[decl]
	src, ok := source(ref.File)
	if !ok || ref.File != top.File || ref.Line > len(src) || top.Line >= ref.Line {
		return
	}
	loop := false
	for l := top.Line; l < ref.Line; l++ {
		t := strings.TrimSpace(src[l-1])
		if headFirst.MatchString(t) {
			loop = true
		} else if loop && (strings.Contains(t, "{") || controlStmt.MatchString(t)) {
			return // the first statement is in another block inside the loop
		}
	}
	if loop {
		mf.blocks[b0] = nil
		mf.blocks[h] = append([]lineAt{{line: decl, addr: g.Blocks[h].Start}}, ls...)
	}
}

// mayDeclare is what declLine needs of a line, checked without running it:
// a name first, and one of the characters that end its declarator.
func mayDeclare(t string) bool {
	return t != "" && (t[0] == '_' || t[0] >= 'a' && t[0] <= 'z' || t[0] >= 'A' && t[0] <= 'Z') && strings.ContainsAny(t, "=;,[")
}
