package linemodel

import "strings"

// Whether a scope's end falls through, read from its statements' structure
// as GCC decides it: lower_try_finally (tree-eh.cc) counts the fall
// through as one of a try/finally's destinations when
// gimple_seq_may_fallthru of its body holds, which looks at the body's
// last statement: a return, goto, break or continue does not fall
// through; an if falls through unless it has an else and neither arm
// does; a compound statement falls through as its own last statement
// does. Anything else (an expression, a call, a loop, a switch) is taken
// to fall through. Reading only the scope's last line took the last arm of
// a return spread over lines (zlib's uncompress2) for a statement that
// falls through, and an if's then branch alone (`if (c)` then `return;`)
// for one that does not.

// endFallsThrough reports whether control reaches the end of the scope
// whose braces are on lines open and close (at gives a line's code text,
// codeText), by its last statement. The statements are read after the
// scope's last preprocessor directive (the branches of a conditional need
// not parse alone); a scope whose last line is a directive (its last
// statement may be compiled out) falls through. Where the statements do
// not parse, the last line is read alone: it falls through unless it is a
// jump statement.
func endFallsThrough(at func(int) string, open, close int) bool {
	var b strings.Builder
	lastLine := ""
	for l := open + 1; l < close; l++ {
		t := strings.TrimSpace(at(l))
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "#") {
			b.Reset()
			lastLine = t
			continue
		}
		if t != "}" {
			lastLine = t
		}
		b.WriteString(t)
		b.WriteByte('\n')
	}
	if strings.HasPrefix(lastLine, "#") {
		return true
	}
	s := b.String()
	last, ok := lastStatement(s, 0, len(s))
	if !ok {
		return !exitJump.MatchString(lastLine)
	}
	return mayFallThru(s, last, len(s))
}

// lastStatement returns where the last statement of s[from:to] starts,
// and false when there is none or s does not parse as statements.
func lastStatement(s string, from, to int) (int, bool) {
	last, found := 0, false
	for i := skipSpace(s, from); i < to; i = skipSpace(s, i) {
		e := stmtEnd(s, i, to)
		if e <= i {
			return 0, false
		}
		if strings.TrimSpace(s[i:e]) != ";" {
			last, found = i, true
		}
		i = e
	}
	return last, found
}

// mayFallThru is gimple_stmt_may_fallthru of the statement at s[i:],
// which ends before to.
func mayFallThru(s string, i, to int) bool {
	i = skipLabels(s, i, to)
	if i >= to {
		return true
	}
	if s[i] == '{' {
		e := matching(s, i, to)
		if e < 0 {
			return true
		}
		last, ok := lastStatement(s, i+1, e-1)
		return !ok || mayFallThru(s, last, e-1)
	}
	switch wordAt(s, i) {
	case "return", "goto", "break", "continue":
		return false
	case "if":
		p := skipSpace(s, i+2)
		if p >= to || s[p] != '(' {
			return true
		}
		then := matching(s, p, to)
		if then < 0 {
			return true
		}
		then = skipSpace(s, then)
		thenEnd := stmtEnd(s, then, to)
		if thenEnd <= then {
			return true
		}
		els := skipSpace(s, thenEnd)
		if wordAt(s, els) != "else" {
			return true
		}
		return mayFallThru(s, then, thenEnd) || mayFallThru(s, skipSpace(s, els+4), to)
	}
	return true
}

// stmtEnd returns the end of the statement starting at s[i] (before to),
// or -1 when it does not parse: a compound statement, an if with its
// else, a loop or switch with its body, a do-while, or anything else up
// to its semicolon outside brackets.
func stmtEnd(s string, i, to int) int {
	i = skipLabels(s, i, to)
	if i >= to {
		return to
	}
	if s[i] == '{' {
		return matching(s, i, to)
	}
	switch w := wordAt(s, i); w {
	case "if", "while", "for", "switch":
		p := skipSpace(s, i+len(w))
		if p >= to || s[p] != '(' {
			return -1
		}
		body := matching(s, p, to)
		if body < 0 {
			return -1
		}
		e := stmtEnd(s, skipSpace(s, body), to)
		if w != "if" || e < 0 {
			return e
		}
		if els := skipSpace(s, e); wordAt(s, els) == "else" {
			return stmtEnd(s, skipSpace(s, els+4), to)
		}
		return e
	case "do":
		e := stmtEnd(s, skipSpace(s, i+2), to)
		if e < 0 {
			return -1
		}
		return semicolonAfter(s, e, to)
	}
	return semicolonAfter(s, i, to)
}

// semicolonAfter returns the end of the first semicolon of s[i:to]
// outside brackets, -1 when there is none.
func semicolonAfter(s string, i, to int) int {
	depth := 0
	for ; i < to; i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth < 0 {
				return -1
			}
		case ';':
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// matching returns the end of the bracket opened at s[i] (just past its
// closing one), -1 when it is not closed before to.
func matching(s string, i, to int) int {
	depth := 0
	for k := i; k < to; k++ {
		switch s[k] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return k + 1
			}
		}
	}
	return -1
}

// skipLabels skips spaces and the labels before a statement at s[i]: a
// name and a colon (not ::), a case with its value, a default.
func skipLabels(s string, i, to int) int {
	for {
		i = skipSpace(s, i)
		w := wordAt(s, i)
		if w == "" {
			return i
		}
		c := skipSpace(s, i+len(w))
		if w == "case" {
			c = i + len(w)
			for c < to && s[c] != ':' && s[c] != ';' && s[c] != '{' {
				c++
			}
		}
		if c >= to || s[c] != ':' || c+1 < to && s[c+1] == ':' {
			return i
		}
		i = c + 1
	}
}

// wordAt returns the identifier starting at s[i], "" when none does.
func wordAt(s string, i int) string {
	if i >= len(s) || !isWordByte(s[i]) || s[i] >= '0' && s[i] <= '9' || i > 0 && isWordByte(s[i-1]) {
		return ""
	}
	e := i
	for e < len(s) && isWordByte(s[e]) {
		e++
	}
	return s[i:e]
}
