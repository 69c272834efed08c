package linemodel

import (
	"slices"
	"strings"
)

// The brace-delimited blocks of a function's source, as the rules of
// finally.go read them: where each opens and closes, what kind of
// statement it is the body of, and the names it declares at its top level.

// loopOrSwitch matches the statement whose body a brace opens when it is
// a loop's or a switch's.
var loopOrSwitch = lazyRE(`^(\}\s*)?(for|while|do|switch)\b`)

// A scope is one brace-delimited block of a function's source.
type scope struct {
	open, close int    // lines of its braces
	kind        string // "loop", "switch" or ""
	parent      int    // index of the enclosing scope, -1 at the top
	names       []string
}

// codeText returns line l of src with comments, string and character
// literals blanked; comment says whether a block comment runs on into the
// line and is updated.
func codeText(line string, comment *bool) string {
	if !*comment && strings.IndexAny(line, `/"'`) < 0 {
		return line // nothing to blank: most lines, without a copy
	}
	b := []byte(line)
	for i := 0; i < len(b); i++ {
		switch {
		case *comment:
			if b[i] == '*' && i+1 < len(b) && b[i+1] == '/' {
				*comment = false
				b[i], b[i+1] = ' ', ' '
				i++
			} else {
				b[i] = ' '
			}
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '*':
			*comment = true
			b[i], b[i+1] = ' ', ' '
			i++
		case b[i] == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b); i++ {
				b[i] = ' '
			}
		case b[i] == '"' || b[i] == '\'':
			q := b[i]
			for i++; i < len(b) && b[i] != q; i++ {
				if b[i] == '\\' {
					b[i] = ' '
					i++
				}
				if i < len(b) {
					b[i] = ' '
				}
			}
		}
	}
	return string(b)
}

// declNames matches the names a declaration line declares.
var declNames = lazyRE(`([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*(?:[=;,]|$)`)

// declaredIn returns the names declaration line t (a line's code text,
// trimmed) declares: the first declarator, then any after a comma; none
// when t declares nothing.
func declaredIn(t string) []string {
	if !mayDeclare(t) || !isDeclLine(t) || notType.MatchString(t) {
		return nil
	}
	i := strings.IndexAny(t, "=;,[")
	if i <= 0 {
		return nil
	}
	var names []string
	if f := strings.Fields(strings.ReplaceAll(t[:i], "*", " ")); len(f) > 0 {
		names = append(names, f[len(f)-1])
	}
	for _, part := range strings.Split(t[i:], ",")[1:] {
		if m := declNames.FindStringSubmatch(strings.TrimLeft(part, " *")); m != nil {
			names = append(names, m[1])
		}
	}
	return names
}

// scopes reads the brace-delimited blocks of source lines lo to hi, with
// the names each declares at its top level.
func scopes(src []string, lo, hi int) []scope { return scopesOf(newSrcText(src), lo, hi) }

// scopesOf is scopes over the index of the source.
func scopesOf(tx *srcText, lo, hi int) []scope {
	var all []scope
	var stack []int
	comment := false
	prev := ""
	for l := lo; l <= hi && l <= len(tx.src); l++ {
		inside := comment
		text, t := tx.code(l, &comment)
		if len(stack) > 0 {
			s := &all[stack[len(stack)-1]]
			s.names = append(s.names, tx.declared(l, inside, t)...)
		}
		if strings.IndexByte(text, '{') < 0 && strings.IndexByte(text, '}') < 0 {
			if t != "" {
				prev = t
			}
			continue // no brace: most lines
		}
		for i := 0; i < len(text); i++ {
			switch text[i] {
			case '{':
				kind := ""
				before := strings.TrimSpace(text[:i])
				if before == "" {
					before = prev
				}
				if loopOrSwitch.MatchString(before) {
					kind = "loop"
					if strings.Contains(before, "switch") {
						kind = "switch"
					}
				}
				parent := -1
				if len(stack) > 0 {
					parent = stack[len(stack)-1]
				}
				all = append(all, scope{open: l, close: hi, kind: kind, parent: parent})
				stack = append(stack, len(all)-1)
			case '}':
				if n := len(stack); n > 0 {
					all[stack[n-1]].close = l
					stack = stack[:n-1]
				}
			}
		}
		if t != "" {
			prev = t
		}
	}
	return all
}

// linesWithin returns the lines of lines (in order) strictly inside scope
// s, a subslice.
func linesWithin(lines []int, s scope) []int {
	i, _ := slices.BinarySearch(lines, s.open+1)
	j, _ := slices.BinarySearch(lines, s.close)
	if j < i {
		return nil
	}
	return lines[i:j]
}

// innermostOf returns, for the scopes all of lines lo to hi, the index of
// the innermost scope holding line l (open < l < close: of those, the
// last opened), -1 for none: a table made once, for destOf asks of every
// jump of every scope, and a function at -O2 has hundreds of scopes.
func innermostOf(all []scope, lo, hi int) func(l int) int {
	in := make([]int32, max(hi-lo+1, 0))
	for k := range in {
		in[k] = -1
	}
	// all is in the order the scopes open, and a scope opened later on
	// a line is chosen over one opened before it.
	for k, s := range all {
		for l := max(s.open+1, lo); l < s.close && l <= hi; l++ {
			if p := in[l-lo]; p < 0 || s.open >= all[p].open {
				in[l-lo] = int32(k)
			}
		}
	}
	return func(l int) int {
		if l < lo || l > hi {
			return -1
		}
		return int(in[l-lo])
	}
}
