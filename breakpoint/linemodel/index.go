package linemodel

import (
	"slices"
	"strings"
	"unicode"

	"github.com/patchprof/patchprof/cfg"
)

// The indexes the rules read instead of scanning again: a source file's
// lines (srcText), and the arcs into each block of a function (predEdges).

// A srcText is one source file as the line model's rules read it: each
// line's code text (codeText: comments and literals blanked) and whether
// it is a case label, each worked out once a run, on first use. The rules
// ask per function, several of them over every line of it, and an
// amalgamation is thousands of functions in one file, which each rule
// read again. A line's code text depends on whether a block comment runs
// into it: the reading from outside one, which a scan of a function gets
// on all its lines but those in a comment, is kept per line; the reading
// from inside one is kept apart.
type srcText struct {
	src   []string
	lines []lineText // per line, read on first use
	// lists are the answers of lineList, by its key.
	lists map[string][]int32
	// inside are the lines' code texts read from inside a block comment,
	// which few lines are asked for.
	inside map[int]codeRead
}

// A lineText is what srcText keeps of one line.
type lineText struct {
	// code is codeText of the line read from outside a block comment,
	// code[lo:hi] it trimmed.
	code   string
	lo, hi int32
	flags  uint8
	// addressed and exitJump are addressed(code) and
	// findExitJump(code[lo:hi]), once lineAddrRead and lineJumpRead say
	// they are read.
	addressed, exitJump []string
	// declared is declaredIn(code[lo:hi]), once lineDeclRead says so.
	declared []string
	// tlo and thi bound the line trimmed (trim), once lineTrimRead says
	// so; match holds the predicates is has read (linePred).
	tlo, thi int32
	match    uint8
}

// A linePred is a test of a line's text trimmed that srcText.is keeps.
type linePred uint8

const (
	predCodeless   linePred = iota // codeless
	predIfOpen                     // ifOpen
	predIfOneLine                  // ifOneLine
	predElseIfOpen                 // elseIfOpen
)

// predRes are the expressions of the linePreds, in their order (four,
// two bits each in lineText.match).
var predRes = [...]*lazyRegexp{predCodeless: codeless, predIfOpen: ifOpen, predIfOneLine: ifOneLine, predElseIfOpen: elseIfOpen}

// lineText's flags.
const (
	lineCoded     = 1 << iota // code, lo, hi and lineOpen are set
	lineOpen                  // a block comment runs on past the line (read from outside one)
	lineCaseRead              // lineCaseLabel is set
	lineCaseLabel             // isCaseLabel of the line trimmed
	lineAddrRead              // addressed is set
	lineJumpRead              // exitJump is set
	lineTrimRead              // tlo and thi are set
	lineDeclRead              // declared is set
)

// A codeRead is codeText of one line from inside a block comment.
type codeRead struct {
	code, trimmed string // codeText's result, and it trimmed
	open          bool   // the comment runs on past the line
}

// newSrcText returns the index of the lines src, empty until read.
func newSrcText(src []string) *srcText {
	return &srcText{src: src, lines: make([]lineText, len(src))}
}

// text returns the index of src, a file's lines as Inputs.Source returned
// them, made on first use. It is keyed by the slice's first line: the
// source reader returns one slice per file, which every rule of every
// function then reads through the one index. (A reader that returns a new
// slice each time gets a new index each time, which is only slower.)
func (m *Model) text(src []string) *srcText {
	if len(src) == 0 {
		return newSrcText(src)
	}
	if t, ok := m.texts[&src[0]]; ok && len(t.src) == len(src) {
		return t
	}
	if m.texts == nil {
		m.texts = make(map[*string]*srcText)
	}
	t := newSrcText(src)
	m.texts[&src[0]] = t
	return t
}

// trim returns line l (1-based) trimmed: strings.TrimSpace(src[l-1]), a
// substring; where it starts and ends is kept, for every function of a
// file (at -O2 most of its file) asks for its lines.
func (t *srcText) trim(l int) string {
	x := &t.lines[l-1]
	line := t.src[l-1]
	if x.flags&lineTrimRead == 0 {
		x.tlo = int32(len(line) - len(strings.TrimLeftFunc(line, unicode.IsSpace)))
		x.thi = x.tlo + int32(len(strings.TrimSpace(line)))
		x.flags |= lineTrimRead
	}
	return line[x.tlo:x.thi]
}

// is returns whether line l trimmed matches p's expression, read once.
func (t *srcText) is(l int, p linePred) bool {
	x := &t.lines[l-1]
	read, yes := uint8(1)<<(2*p), uint8(2)<<(2*p)
	if x.match&read == 0 {
		x.match |= read
		if predRes[p].MatchString(t.trim(l)) {
			x.match |= yes
		}
	}
	return x.match&yes != 0
}

// code returns codeText(src[l-1], comment) and it trimmed, and updates
// comment as codeText does.
func (t *srcText) code(l int, comment *bool) (text, trimmed string) {
	if *comment {
		r, ok := t.inside[l]
		if !ok {
			r.open = true
			r.code = codeText(t.src[l-1], &r.open)
			r.trimmed = strings.TrimSpace(r.code)
			if t.inside == nil {
				t.inside = make(map[int]codeRead)
			}
			t.inside[l] = r
		}
		*comment = r.open
		return r.code, r.trimmed
	}
	x := &t.lines[l-1]
	if x.flags&lineCoded == 0 {
		c := false
		x.code = codeText(t.src[l-1], &c)
		// TrimSpace is a substring, after what TrimLeftFunc drops.
		x.lo = int32(len(x.code) - len(strings.TrimLeftFunc(x.code, unicode.IsSpace)))
		x.hi = x.lo + int32(len(strings.TrimSpace(x.code)))
		x.flags |= lineCoded
		if c {
			x.flags |= lineOpen
		}
	}
	*comment = x.flags&lineOpen != 0
	return x.code, x.code[x.lo:x.hi]
}

// codeTrim is code's trimmed text alone.
func (t *srcText) codeTrim(l int, comment *bool) string {
	_, trimmed := t.code(l, comment)
	return trimmed
}

// words returns, for line l whose code text is t (trimmed when jump),
// findExitJump(t) with jump, else addressed(t): read once for a line read
// from outside a block comment (inside false), each time for one inside.
// Every function of a file asks for its lines' words, and a function at
// -O2, whose rows include the lines of the functions inlined into it,
// spans most of its file.
func (t *srcText) words(l int, inside bool, text string, jump bool) []string {
	if inside {
		if jump {
			return findExitJump(text)
		}
		return addressed(text)
	}
	x := &t.lines[l-1]
	if jump {
		if x.flags&lineJumpRead == 0 {
			x.exitJump, x.flags = findExitJump(text), x.flags|lineJumpRead
		}
		return x.exitJump
	}
	if x.flags&lineAddrRead == 0 {
		x.addressed, x.flags = addressed(text), x.flags|lineAddrRead
	}
	return x.addressed
}

// declared returns declaredIn(text), text being line l's code trimmed:
// read once for a line read from outside a block comment (inside false).
func (t *srcText) declared(l int, inside bool, text string) []string {
	if inside {
		return declaredIn(text)
	}
	x := &t.lines[l-1]
	if x.flags&lineDeclRead == 0 {
		x.declared, x.flags = declaredIn(text), x.flags|lineDeclRead
	}
	return x.declared
}

// lineList returns, in order, the lines of the file for which take is
// true, read once per key: the lines a rule of a function's range can
// take for their text alone, so that each function looks at those in its
// range only (at -O2 a function's range spans the lines of what is
// inlined into it, most of its file).
func (t *srcText) lineList(key string, take func(l int) bool) []int32 {
	if out, ok := t.lists[key]; ok {
		return out
	}
	var out []int32
	for l := 1; l <= len(t.src); l++ {
		if take(l) {
			out = append(out, int32(l))
		}
	}
	if t.lists == nil {
		t.lists = make(map[string][]int32)
	}
	t.lists[key] = out
	return out
}

// linesFrom returns the lines of list (in order) from lo on.
func linesFrom(list []int32, lo int) []int32 {
	k, _ := slices.BinarySearch(list, int32(lo))
	return list[k:]
}

// codelessLines returns the lines addCodeless can take away from -O0: a
// preprocessor conditional's start or end, or a line its rules may give
// a row (va_end, an if whose block may be empty; with cpp, one whose code
// begins with if, for emptyBoolNot). Any other line is skipped by each
// rule for its text alone.
func (t *srcText) codelessLines(cpp bool) []int32 {
	key := "codeless"
	if cpp {
		key = "codeless C++"
	}
	return t.lineList(key, func(l int) bool {
		kind, _ := directive(t.trim(l))
		if kind == ppIf || kind == ppEndif || t.is(l, predCodeless) || t.is(l, predIfOpen) || t.is(l, predIfOneLine) {
			return true
		}
		comment := false
		_, code := t.code(l, &comment)
		return cpp && strings.HasPrefix(code, "if")
	})
}

// foldLines returns the lines addFoldedJumps can take: an else if that
// opens its block, or a break or continue alone.
func (t *srcText) foldLines() []int32 {
	return t.lineList("fold", func(l int) bool { return t.is(l, predElseIfOpen) || foldable.MatchString(t.trim(l)) })
}

// loopLines returns the lines addLatches can take: a loop with no
// condition, or a while on one name.
func (t *srcText) loopLines() []int32 {
	return t.lineList("loop", func(l int) bool {
		return foreverLoop.MatchString(t.trim(l)) || namedLoop.MatchString(t.trim(l))
	})
}

// isCaseLabel returns isCaseLabel(trim(l)), read once.
func (t *srcText) isCaseLabel(l int) bool {
	x := &t.lines[l-1]
	if x.flags&lineCaseRead == 0 {
		x.flags |= lineCaseRead
		if isCaseLabel(t.trim(l)) {
			x.flags |= lineCaseLabel
		}
	}
	return x.flags&lineCaseLabel != 0
}

// predEdges returns, per block of g, the indices of the edges into it
// (the function's entry arc too), in edge order. A rule asking which arcs
// enter a block reads that list instead of every edge of the function.
func predEdges(g *cfg.Graph) [][]int32 {
	ins := make([][]int32, len(g.Blocks))
	for k, e := range g.Edges {
		if e.To >= 0 {
			ins[e.To] = append(ins[e.To], int32(k))
		}
	}
	return ins
}

// predsOf returns predEdges of the function's graph g, made on first use.
func (mf *modelFunc) predsOf(g *cfg.Graph) [][]int32 {
	if mf.preds == nil {
		mf.preds = predEdges(g)
	}
	return mf.preds
}

// mergeEdges returns the edge indices of a and b (each in order, none in
// both) in order.
func mergeEdges(a, b []int32) []int32 {
	out := make([]int32, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0] < b[0] {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// fileKeys are the model keys of one file's lines: keys[line] is the key
// plus one, 0 for a line with none yet.
type fileKeys struct {
	file string
	keys []int32
}

// maxDenseLine bounds the lines fileKeys holds by line; a row's line
// at or above it (a broken line table) is only in Model.index.
const maxDenseLine = 1 << 22

// denseLine reports whether fileKeys holds line l.
func denseLine(l int) bool { return l >= 0 && l < maxDenseLine }

// note records key k of line l, a denseLine.
func (fk *fileKeys) note(l int, k int32) {
	if l >= len(fk.keys) {
		fk.keys = append(fk.keys, make([]int32, l+1-len(fk.keys))...)
	}
	fk.keys[l] = k + 1
}

// fileKeysOf returns the fileKeys of file, made on first use.
func (m *Model) fileKeysOf(file string) *fileKeys {
	if fk := m.lastFile; fk != nil && fk.file == file {
		return fk
	}
	fk, ok := m.byFile[file]
	if !ok {
		if m.byFile == nil {
			m.byFile = make(map[string]*fileKeys)
		}
		fk = &fileKeys{file: file}
		m.byFile[file] = fk
	}
	m.lastFile = fk
	return fk
}

// keyOf returns the model's key of line ref, false when it has none yet.
// A key is asked for every row of every block: the dense keys by line
// spare hashing the file's path for each, as a map by LineRef would.
func (m *Model) keyOf(ref LineRef) (int32, bool) {
	if !denseLine(ref.Line) {
		k, ok := m.index[ref]
		return k, ok
	}
	fk := m.fileKeysOf(ref.File)
	if ref.Line < len(fk.keys) && fk.keys[ref.Line] > 0 {
		return fk.keys[ref.Line] - 1, true
	}
	return 0, false
}
