package profile

// appendIndented appends src, compact JSON as json.Marshal writes it, to
// dst with the layout json.Indent(dst, src, prefix, "  ") gives: a newline,
// prefix and two spaces per level after each opening bracket and comma and
// before each closing bracket, a space after each colon, and "{}" and "[]"
// kept whole. It is that function without its validating scanner, which
// took three fifths of writing a large profile: src is trusted to be valid
// and compact (TestAppendIndented compares the two).
func appendIndented(dst, src []byte, prefix string) []byte {
	depth := 0
	inString, escaped := false, false
	needIndent := false
	for _, c := range src {
		if inString {
			dst = append(dst, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if needIndent && c != '}' && c != ']' {
			needIndent = false
			depth++
			dst = appendNewline(dst, prefix, depth)
		}
		switch c {
		case '"':
			inString = true
			dst = append(dst, c)
		case '{', '[':
			// The newline waits for the next byte: an empty object or
			// array stays "{}" or "[]".
			needIndent = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			dst = appendNewline(dst, prefix, depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if needIndent {
				needIndent = false
			} else {
				depth--
				dst = appendNewline(dst, prefix, depth)
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// appendNewline appends a newline, prefix and depth levels of two spaces.
func appendNewline(dst []byte, prefix string, depth int) []byte {
	dst = append(dst, '\n')
	dst = append(dst, prefix...)
	for range depth {
		dst = append(dst, ' ', ' ')
	}
	return dst
}
