package output

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// escapeControl returns s with its control characters (C0, DEL and C1)
// written as Go escapes ("\n", "\x1b", "\u009b") and its invalid UTF-8
// bytes as "\xNN". File and function names come from a profile or from
// DWARF, which anyone can write: unescaped, a newline in one splits a
// listing row or an lcov SF: record in two, and an escape sequence reaches
// the user's terminal and acts there (C1's CSI, U+009B, as much as ESC [).
// Text without such characters, the usual case, is returned as it is.
func escapeControl(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			break
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || isC1(r) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case r < 0x20 || r == 0x7f || isC1(r):
			q := strconv.QuoteRune(r) // '\n', '\x1b', '\u009b'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// isC1 reports whether r is a C1 control character (U+0080 to U+009F),
// which terminals act on like ESC sequences.
func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }
