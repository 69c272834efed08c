package linemodel

import (
	"maps"
	"slices"
	"strings"

	"github.com/patchprof/patchprof/cfg"
	"github.com/patchprof/patchprof/lineinfo"
)

// Cases whose statements all compile to nothing (asserts, a body inside
// #ifdef, a macro that expands to nothing): gcov counts their label and
// their break, as GCC's graph keeps both in a block of their own, but
// -O0 points their jump-table entries at the switch's end (or at a lone
// nop there, or at the block of a default with no code), where every
// other empty case and, without a default, every value no case names
// goes too. The line model counts such cases as a group: the jump-table
// arcs into those places. Where the dispatch's entries were counted and
// each case's values are read from its label (caseentries.go), each case
// gets its own count; otherwise, when they never ran, that is 0 for every
// label of the group, exactly; when the group is one case and a default
// with code takes the values no case names, it is the case's count; else
// the count is unknown and the lines are left without one rather than
// given a count that may be wrong (Counts' unknown). Only in GCC -O0 code: an
// optimizer merges the code of identical cases (cross-jumping), which
// leaves a case with code but no row.

// A caseGroup is the empty cases of one switch.
type caseGroup struct {
	dispatch  int     // the block holding the switch's indirect jump
	sw, close int     // the switch's line and its closing brace's
	edges     []int   // its jump-table arcs to where the empty cases go
	keys      []int32 // the labels' and breaks' lines (model keys)
	extra     []int32 // those no block of the graph carries
	exact     bool    // the arcs carry the group's only case and no other value
	// perCase, when each case's entries in the dispatch's table are
	// known, splits the group's count by case (caseentries.go); size is
	// the table's.
	perCase []caseEntries
	size    int
}

// A switchCase is one label at the top level of a switch's body and the
// lines of its statements, up to the next label.
type switchCase struct {
	label, end int // label line; first line after its statements
	isDefault  bool
	brk        int  // the line of its break at the top of its statements, 0 for none
	coded      bool // some line of it has a row (other than a break at a nop)
	// In a preprocessor conditional of the switch's body (switchCasesIn):
	// dead when its branch was not compiled, unsure when that is not
	// known.
	dead, unsure bool
}

// addEmptyCases finds, for each switch dispatched through a jump table in
// the function, its empty cases (no row from their label to their break,
// or only a break's row at a lone nop the table points at) and records
// them as a caseGroup.
func (m *Model) addEmptyCases(g *cfg.Graph, mf *modelFunc, rs []fnRow, lt *lineinfo.Table, fi int, source func(string) ([]string, bool)) {
	file, src, ok := funcSource(rs, source)
	if !ok {
		return
	}
	pp := m.preprocessed(file, src, lt)
	branch := func(l int) int8 { return pp.branchAbove(src, l+1) }
	coded := map[int]bool{}
	for _, r := range rs {
		if r.ref.File == file {
			coded[r.ref.Line] = true
		}
	}
	jt := map[int][]int{} // dispatch block -> its jump-table edges
	for k, e := range g.Edges {
		if e.Kind == cfg.JumpTable && e.From >= 0 && e.To >= 0 {
			jt[e.From] = append(jt[e.From], k)
		}
	}
	for _, d := range slices.Sorted(maps.Keys(jt)) { // the model's lines in a fixed order
		edges := jt[d]
		sw := 0
		for _, x := range mf.blocks[d] {
			if ref := m.keys[x.line]; ref.File == file && ref.Line <= len(src) && switchLine.MatchString(strings.TrimSpace(src[ref.Line-1])) {
				sw = ref.Line
			}
		}
		if sw == 0 {
			continue
		}
		// A nop the table points at: its break row is no code of a case.
		nop := map[int]bool{}
		for _, k := range edges {
			if bl := g.Blocks[g.Edges[k].To]; bl.Insts == 1 {
				for _, x := range mf.blocks[g.Edges[k].To] {
					if ref := m.keys[x.line]; ref.File == file {
						nop[ref.Line] = true
					}
				}
			}
		}
		cases, close := switchCasesIn(src, sw, coded, nop, branch)
		if close == 0 {
			continue
		}
		var grp caseGroup
		grp.dispatch, grp.sw, grp.close = d, sw, close
		defaultCoded := false
		bareLabel, bareEnd := 0, 0 // a default whose only code is its break
		var lines []int            // the empty cases' labels and breaks
		inGroup := map[int]bool{}
		unsure := false
		for _, c := range cases {
			switch {
			case c.dead:
			case c.unsure && !c.coded:
				unsure = true // maybe an empty case, maybe none
			case c.isDefault:
				defaultCoded = defaultCoded || c.coded
				if onlyBreak(c, coded) {
					bareLabel, bareEnd = c.label, c.end
				}
			case !c.coded && c.brk > 0:
				lines = append(lines, c.label, c.brk)
				inGroup[c.label], inGroup[c.brk] = true, true
			}
		}
		if len(lines) == 0 {
			continue
		}
		// Where the empty cases go: a target whose first line is one of
		// theirs, or lies outside the switch's body (its end), or is the
		// block of a default with no code but its break (a nop and a jmp
		// the table points at), which then takes no values of its own
		// apart from theirs: the group's count is no case's alone.
		bare := false
		for _, k := range edges {
			ls := mf.blocks[g.Edges[k].To]
			if len(ls) == 0 {
				grp.edges = append(grp.edges, k)
				continue
			}
			ref := m.keys[ls[0].line]
			atDefault := ref.Line >= bareLabel && ref.Line < bareEnd
			if ref.File != file || ref.Line <= sw || ref.Line >= close || inGroup[ref.Line] || atDefault {
				grp.edges = append(grp.edges, k)
				bare = bare || atDefault
			}
		}
		if len(grp.edges) == 0 {
			continue
		}
		for _, l := range lines {
			grp.keys = append(grp.keys, m.lineKey(LineRef{File: file, Line: l}, fi))
		}
		carried := map[int32]bool{}
		for _, ls := range mf.blocks {
			for _, x := range ls {
				carried[x.line] = true
			}
		}
		for _, k := range grp.keys {
			if !carried[k] {
				grp.extra = append(grp.extra, k)
			}
		}
		grp.exact = len(lines) == 2 && defaultCoded && !bare
		if !unsure {
			grp.perCase, grp.size = m.groupEntries(g, mf, &grp, file, src, cases, inGroup, fi)
		}
		mf.cases = append(mf.cases, grp)
	}
}

// assignStmt matches a statement that assigns to a variable, which GCC
// -O0 always gives code.
var assignStmt = lazyRE(`^[A-Za-z_][\w.\[\]>-]*\s*([-+*/%&|^]|<<|>>)?=[^=]`)

// onlyBreak reports whether case c has no code (coded, by line) but its
// break's, if any.
func onlyBreak(c switchCase, coded map[int]bool) bool {
	for l := c.label; l < c.end; l++ {
		if coded[l] && l != c.brk {
			return false
		}
	}
	return true
}

// switchCases reads the body of the switch on line sw: the labels at its
// top level, each with its statements, and the line of its closing brace
// (0 when not found within the file). A break's row on a nop line (nop)
// does not make its case coded. A label inside a preprocessor
// conditional of the body is read as a statement of the case before.
func switchCases(src []string, sw int, coded, nop map[int]bool) ([]switchCase, int) {
	return switchCasesIn(src, sw, coded, nop, nil)
}

// switchCasesIn is switchCases reading the labels inside preprocessor
// conditionals of the body (zlib's `#ifdef O_CLOEXEC` around `case 'e':`)
// as labels too when branch is not nil: branch(l) says whether the
// branch holding line l was compiled (1), was not (-1: the case is dead),
// or is not known (0: unsure).
func switchCasesIn(src []string, sw int, coded, nop map[int]bool, branch func(int) int8) ([]switchCase, int) {
	comment := false
	depth, pp := 0, 0 // braces open since the switch; conditionals open since it
	opened := false
	var cases []switchCase
	for l := sw; l <= len(src); l++ {
		t := strings.TrimSpace(codeText(src[l-1], &comment))
		atDepth, atPP := depth, pp
		if kind, _ := directive(t); kind != ppNone {
			switch kind {
			case ppIf:
				pp++
			case ppEndif:
				pp--
			}
			if n := len(cases); n > 0 && atPP == 0 && kind != ppEndif && kind != ppIf {
				cases[n-1].coded = true // an #else at the case's level: unknown which branch
			}
			continue
		}
		for _, ch := range t {
			switch ch {
			case '{':
				depth++
				opened = true
			case '}':
				depth--
			}
		}
		if !opened {
			continue
		}
		if depth <= 0 {
			if n := len(cases); n > 0 {
				cases[n-1].end = l
			}
			return cases, l
		}
		if l == sw {
			continue
		}
		if atDepth == 1 && (atPP == 0 || atPP > 0 && branch != nil) && isCaseLabel(t) {
			if n := len(cases); n > 0 {
				cases[n-1].end = l
			}
			c := switchCase{label: l, isDefault: strings.HasPrefix(t, "default"), coded: coded[l]}
			if atPP > 0 {
				st := branch(l)
				c.dead, c.unsure = st < 0, st == 0
			}
			cases = append(cases, c)
			continue
		}
		n := len(cases)
		if n == 0 {
			continue
		}
		c := &cases[n-1]
		if t == "break;" && atPP == 0 && atDepth <= 2 && c.brk == 0 {
			c.brk = l
			c.coded = c.coded || coded[l] && !nop[l]
			continue
		}
		if c.unsure && !coded[l] && assignStmt.MatchString(t) {
			c.dead = true // an assignment -O0 would give code: compiled out
		}
		switch {
		case coded[l] || atPP < 0:
			c.coded = true
		case c.brk > 0 && t != "" && t != "}":
			c.coded = true // a statement after the break
		case c.brk == 0 && atPP == 0 && strings.ContainsAny(t, "{}"):
			// A block before the break (outside a conditional, which
			// with no row was compiled out): the break may not be the
			// case's.
			c.coded = true
		}
	}
	return nil, 0
}

// trailingLabel reports whether the label at line label of file (its
// lines src) is the last of its switch and nothing follows it but
// statements with no code (an empty statement, a macro that expands to
// nothing): GCC's label is then followed by the switch's break label and
// shares its block, the switch's end, which every break and the end of
// the last case enter too. firstAt has the address of each line with
// code.
func trailingLabel(src []string, label int, file string, firstAt map[LineRef]uint64) bool {
	comment := false
	t := codeText(src[label-1], &comment)
	if i := strings.Index(t, ":"); i >= 0 {
		t = t[i+1:]
	}
	for l := label; l <= len(src) && l < label+16; l++ {
		if l > label {
			t = codeText(src[l-1], &comment)
			if _, ok := firstAt[LineRef{File: file, Line: l}]; ok {
				return false
			}
		}
		for _, w := range [...]string{"break", "return", "goto", "continue", "case", "default"} {
			if i := strings.Index(t, w); i >= 0 && wordAt(t, i) == w {
				return false
			}
		}
		depth := 0
		for i := 0; i < len(t); i++ {
			switch t[i] {
			case '{':
				depth++
			case '}':
				if depth--; depth < 0 {
					return strings.Trim(t[:i], " \t;") == ""
				}
			}
		}
	}
	return false
}
