package linemodel

import (
	"strconv"
	"strings"

	"github.com/patchprof/patchprof/cfg"
)

// The empty cases of a group (emptycases.go) share their jump-table
// target with each other and with the values no case names, so the arcs
// of the dispatch cannot tell them apart; GCC's graph has an edge per
// case from the switch, and gcov counts each. Counted per table entry
// (the index the dispatch jumps with: Counts' entries), each empty case
// has its own count: the entries of its values. A case's values are read
// from its label (an integer or character constant, a range, or a macro
// the file defines as one), and the table's first value from the cases
// with code: the one offset under which every such case's entries lead
// into its own statements. Where either cannot be read, the group keeps
// its count as a whole.

// A caseEntries is one empty case of a group: its label's and break's
// model keys and its entries in the dispatch's table.
type caseEntries struct {
	keys []int32
	idx  []int
	// Per entry: the block it jumps to, and whether that block is the
	// default's own (its lines all inside the switch) rather than the
	// switch's end, where the case's break goes too.
	to     []int
	inside []bool
}

// entryCases resolves each empty case of a group (cases, the switch's
// labels, and empty, the labels of the group's cases) to the entries of
// table tab, or returns nil. key gives a line's model key, firstLine
// the first source line of the block at a target (0 for none), and
// shared whether a target is one where the group's cases go.
func (m *Model) entryCases(file string, src []string, cases []switchCase, empty map[int]bool, tab *cfg.Table, key func(int) int32, firstLine func(target uint64) int, shared func(target uint64) bool) []caseEntries {
	if tab == nil || tab.Computed || len(tab.Targets) == 0 {
		return nil
	}
	defs := m.definesOf(file, src)
	lows := map[int64]bool{}
	first := true
	for _, c := range cases {
		if c.isDefault || c.dead || empty[c.label] {
			continue
		}
		vs, ok := caseValues(src[c.label-1], defs)
		if !ok || len(vs) != 1 {
			continue
		}
		cand := map[int64]bool{}
		for i, t := range tab.Targets {
			if l := firstLine(t); l >= c.label && l < c.end {
				cand[vs[0]-int64(i)] = true
			}
		}
		if len(cand) == 0 {
			continue // dispatched before the table (a compare of its own)
		}
		if first {
			lows, first = cand, false
			continue
		}
		for v := range lows {
			if !cand[v] {
				delete(lows, v)
			}
		}
	}
	if len(lows) != 1 {
		return nil
	}
	var low int64
	for v := range lows {
		low = v
	}
	var out []caseEntries
	for _, c := range cases {
		if !empty[c.label] {
			continue
		}
		vs, ok := caseValues(src[c.label-1], defs)
		if !ok {
			return nil
		}
		ce := caseEntries{keys: []int32{key(c.label), key(c.brk)}}
		for _, v := range vs {
			i := v - low
			if i < 0 || i >= int64(len(tab.Targets)) || !shared(tab.Targets[i]) {
				return nil
			}
			ce.idx = append(ce.idx, int(i))
		}
		out = append(out, ce)
	}
	return out
}

// maxCaseRange bounds the values of a `case A ... B:` range read.
const maxCaseRange = 1 << 12

// caseValues returns the values a `case` label on line names: an integer
// or character constant, optionally negated, a macro of defs that is one,
// or a GNU range of them. ok is false for anything else (an enumerator,
// an expression).
func caseValues(line string, defs map[string]string) ([]int64, bool) {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "case") {
		return nil, false
	}
	t = t[len("case"):]
	colon := labelColon(t)
	if colon < 0 {
		return nil, false
	}
	t = strings.TrimSpace(t[:colon])
	if lo, hi, ok := strings.Cut(t, "..."); ok {
		a, ok1 := constValue(strings.TrimSpace(lo), defs, 0)
		b, ok2 := constValue(strings.TrimSpace(hi), defs, 0)
		if !ok1 || !ok2 || b < a || b-a >= maxCaseRange {
			return nil, false
		}
		vs := make([]int64, 0, b-a+1)
		for v := a; v <= b; v++ {
			vs = append(vs, v)
		}
		return vs, true
	}
	v, ok := constValue(t, defs, 0)
	if !ok {
		return nil, false
	}
	return []int64{v}, true
}

// labelColon returns the index in t of the colon that ends a case label,
// outside character literals; -1 when there is none.
func labelColon(t string) int {
	quote := false
	for i := 0; i < len(t); i++ {
		switch {
		case quote && t[i] == '\\':
			i++
		case t[i] == '\'':
			quote = !quote
		case !quote && t[i] == ':':
			return i
		}
	}
	return -1
}

// constValue reads t as an integer constant: a literal (decimal, octal,
// hex, with suffixes), a character literal, a parenthesised or negated one,
// or a macro of defs (depth bounds the macros followed).
func constValue(t string, defs map[string]string, depth int) (int64, bool) {
	t = strings.TrimSpace(t)
	for len(t) >= 2 && t[0] == '(' && t[len(t)-1] == ')' {
		t = strings.TrimSpace(t[1 : len(t)-1])
	}
	switch {
	case t == "":
		return 0, false
	case t[0] == '-':
		v, ok := constValue(t[1:], defs, depth)
		return -v, ok
	case t[0] == '\'':
		return charValue(t)
	case t[0] >= '0' && t[0] <= '9':
		s := strings.TrimRight(t, "uUlL")
		v, err := strconv.ParseInt(s, 0, 64)
		if err != nil && strings.HasPrefix(s, "0") && len(s) > 1 && s[1] != 'x' && s[1] != 'X' {
			v, err = strconv.ParseInt(s[1:], 8, 64)
		}
		return v, err == nil
	case isIdent(t):
		d, ok := defs[t]
		if !ok || depth > 8 {
			return 0, false
		}
		return constValue(d, defs, depth+1)
	}
	return 0, false
}

// charValue reads a C character literal ('a', '\n', '\x41', '\101') as
// an int.
func charValue(t string) (int64, bool) {
	if len(t) < 3 || t[len(t)-1] != '\'' {
		return 0, false
	}
	s, err := strconv.Unquote(`"` + t[1:len(t)-1] + `"`)
	if err != nil || len(s) != 1 {
		return 0, false
	}
	return int64(int8(s[0])), true
}

// isIdent reports whether t is a C identifier.
func isIdent(t string) bool {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return t != ""
}

// definesOf returns the object-like macros file defines (name to its
// replacement text, comments dropped), read on first use. A name defined
// twice with different texts is left out: which one holds is the
// preprocessor's to say.
func (m *Model) definesOf(file string, src []string) map[string]string {
	if d, ok := m.defs[file]; ok {
		return d
	}
	if m.defs == nil {
		m.defs = map[string]map[string]string{}
	}
	d := map[string]string{}
	clash := map[string]bool{}
	comment := false
	for _, raw := range src {
		inComment := comment
		// Only a line with a # can be a directive: of the others only
		// whether a block comment runs on past them matters, which a
		// line with no / (outside one) or no */ (inside) does not change.
		// Blanking every line of an amalgamation was a sixteenth of the
		// model's time.
		if strings.IndexByte(raw, '#') < 0 && (!comment && strings.IndexByte(raw, '/') < 0 || comment && !strings.Contains(raw, "*/")) {
			continue
		}
		t := strings.TrimSpace(codeText(raw, &comment))
		if !inComment && !strings.Contains(raw, "/") {
			t = strings.TrimSpace(raw) // its character literals unblanked
		}
		if !strings.HasPrefix(t, "#") {
			continue
		}
		t = strings.TrimSpace(t[1:])
		if !strings.HasPrefix(t, "define") {
			continue
		}
		f := strings.Fields(t[len("define"):])
		if len(f) < 2 || !isIdent(f[0]) {
			continue // not object-like with a body, or a function-like macro
		}
		body := strings.Join(f[1:], " ")
		if old, ok := d[f[0]]; ok && old != body || clash[f[0]] {
			clash[f[0]] = true
			delete(d, f[0])
			continue
		}
		d[f[0]] = body
	}
	m.defs[file] = d
	return d
}

// groupEntries resolves the empty cases of the switch dispatched by block
// d of g (cases; inGroup holds their labels' and breaks' lines) to their
// entries in its table: entryCases, with the table's size; nil when it
// cannot.
func (m *Model) groupEntries(g *cfg.Graph, mf *modelFunc, grp *caseGroup, file string, src []string, cases []switchCase, inGroup map[int]bool, fi int) ([]caseEntries, int) {
	d := grp.dispatch
	var tab *cfg.Table
	for k := range g.Tables {
		if g.Tables[k].Jump == g.Blocks[d].Last {
			tab = &g.Tables[k]
		}
	}
	if tab == nil {
		return nil, 0
	}
	empty := map[int]bool{}
	for _, c := range cases {
		if inGroup[c.label] && !c.isDefault {
			empty[c.label] = true
		}
	}
	firstLine := func(target uint64) int {
		b, ok := g.BlockAt(target)
		if !ok || len(mf.blocks[b]) == 0 {
			return 0
		}
		ref := m.keys[mf.blocks[b][0].line]
		if ref.File != file {
			return 0
		}
		return ref.Line
	}
	key := func(l int) int32 { return m.lineKey(LineRef{File: file, Line: l}, fi) }
	shared := func(target uint64) bool {
		for _, k := range grp.edges {
			if g.Edges[k].Target == target {
				return true
			}
		}
		return false
	}
	pc := m.entryCases(file, src, cases, empty, tab, key, firstLine, shared)
	own := map[int32]bool{}
	for _, ce := range pc {
		for _, k := range ce.keys {
			own[k] = true
		}
	}
	for k := range pc {
		ce := &pc[k]
		for _, i := range ce.idx {
			b, ok := g.BlockAt(tab.Targets[i])
			if !ok {
				return nil, 0
			}
			ce.to = append(ce.to, b)
			ce.inside = append(ce.inside, m.insideSwitch(mf.blocks[b], own, file, cases))
		}
	}
	if pc == nil {
		return nil, 0
	}
	return pc, len(tab.Targets)
}

// Dispatches returns the table-wide block indexes of the dispatches whose
// per-entry counts (Counts' entries) give each of their empty cases its
// own count. m may be nil.
func (m *Model) Dispatches() []int {
	if m == nil {
		return nil
	}
	var out []int
	for _, mf := range m.funcs {
		for _, cg := range mf.cases {
			if cg.perCase != nil {
				out = append(out, m.graphs[mf.graph].FirstBlock+cg.dispatch)
			}
		}
	}
	return out
}

// insideSwitch reports whether a block's lines, but those of own (the
// empty cases'), are all lines of the switch whose labels are cases, and
// there is one: the default's own block, not the switch's end.
func (m *Model) insideSwitch(ls []lineAt, own map[int32]bool, file string, cases []switchCase) bool {
	if len(cases) == 0 {
		return false
	}
	lo, hi := cases[0].label, cases[len(cases)-1].end
	n := 0
	for _, x := range ls {
		if own[x.line] {
			continue
		}
		ref := m.keys[x.line]
		if ref.File != file || ref.Line < lo || ref.Line >= hi {
			return false
		}
		n++
	}
	return n > 0
}
