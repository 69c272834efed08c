package linemodel

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf8"
)

// A lazyRegexp is a regular expression compiled at its first use: the line
// model's expressions cost every patchprof start something, and --version
// and --funcs use none of them.
//
// The model asks its expressions of nearly every source line, and most
// lines fail at their first byte: an expression anchored at the start
// (`^if\s*\(`, `^[A-Za-z_]\w*\s*:`) refuses a line whose first byte no
// match can begin with before the regexp engine runs.
type lazyRegexp struct {
	expr  string
	once  sync.Once
	re    *regexp.Regexp
	first *[256]bool // the bytes a match may begin with; nil when unknown
}

// lazyRE returns the expression expr, to be compiled when first used; it
// panics then if expr does not compile (as regexp.MustCompile).
func lazyRE(expr string) *lazyRegexp { return &lazyRegexp{expr: expr} }

func (l *lazyRegexp) get() *regexp.Regexp {
	l.once.Do(func() {
		l.re = regexp.MustCompile(l.expr)
		// A match of an expression that starts with ^ (no flags that
		// could make ^ match at each line) begins at the text's start.
		if strings.HasPrefix(l.expr, "^") {
			l.first = firstBytes(l.expr)
		}
	})
	return l.re
}

// refuses reports whether s cannot match for its first byte: an empty s
// when no match is empty.
func (l *lazyRegexp) refuses(s string) bool {
	if l.first == nil {
		return false
	}
	return s == "" || !l.first[s[0]]
}

// firstBytes returns the bytes a match of expr may begin with, from the
// instructions its program may run first; nil when that is unknown (an
// empty match, a case-folded rune).
func firstBytes(expr string) *[256]bool {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil
	}
	var first [256]bool
	addRange := func(lo, hi rune) {
		if hi >= utf8.RuneSelf {
			// A multi-byte rune's first byte: any byte from 0x80 up
			// (an invalid byte decodes as U+FFFD).
			for b := 0x80; b < 256; b++ {
				first[b] = true
			}
			hi = utf8.RuneSelf - 1
		}
		for r := lo; r <= hi; r++ {
			first[r] = true
		}
	}
	seen := map[uint32]bool{}
	todo := []uint32{uint32(prog.Start)}
	for len(todo) > 0 {
		pc := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[pc] {
			continue
		}
		seen[pc] = true
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			todo = append(todo, in.Out, in.Arg)
		case syntax.InstCapture, syntax.InstNop, syntax.InstEmptyWidth:
			// An empty-width assertion only narrows what follows.
			todo = append(todo, in.Out)
		case syntax.InstRune, syntax.InstRune1:
			if syntax.Flags(in.Arg)&syntax.FoldCase != 0 {
				return nil
			}
			for k := 0; k+1 < len(in.Rune); k += 2 {
				addRange(in.Rune[k], in.Rune[k+1])
			}
			if len(in.Rune) == 1 {
				addRange(in.Rune[0], in.Rune[0])
			}
		case syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			return nil
		default: // InstMatch, InstFail: an empty match, or unknown
			return nil
		}
	}
	return &first
}

func (l *lazyRegexp) MatchString(s string) bool {
	re := l.get()
	return !l.refuses(s) && re.MatchString(s)
}

func (l *lazyRegexp) FindStringSubmatch(s string) []string {
	re := l.get()
	if l.refuses(s) {
		return nil
	}
	return re.FindStringSubmatch(s)
}
