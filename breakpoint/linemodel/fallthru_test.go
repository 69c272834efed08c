package linemodel

import (
	"strings"
	"testing"
)

// TestEndFallsThrough reads scope bodies as GCC's gimple_seq_may_fallthru
// judges their last statement.
func TestEndFallsThrough(t *testing.T) {
	for _, c := range []struct {
		body string
		want bool
	}{
		{"x = 1;", true},
		{"return x;", false},
		{"if (a) return 1;\nreturn a ? b :\n       c;", false},
		{"if (a)\n\treturn 1;", true},
		{"if (a)\n\tg++;\nelse\n\treturn;", true},
		{"if (a)\n\treturn 2;\nelse\n\treturn 3;", false},
		{"if (a) {\n\treturn 2;\n} else {\n\tgoto out;\n}", false},
		{"if (a) {\n\treturn 2;\n} else if (b) {\n\tbreak;\n}", true},
		{"{\n\tx = 1;\n\tcontinue;\n}", false},
		{"out:\n\treturn x;", false},
		{"default:\n\treturn x;", false},
		{"do {\n\tx++;\n} while (x < 3);", true},
		{"while (x)\n\treturn 1;", true},
		{"switch (x) {\ncase 1:\n\treturn 1;\n}", true},
		{"return 1;\n#ifdef X\nx = 2;\n#endif", true},
		{"#ifdef X\nif (a ||\n#else\nif (\n#endif\n\tb) x++;\nreturn 1;", false},
		{"int a[] = { 1, 2 };", true},
		{"return (", false}, // no parse: the last line, read alone
	} {
		lines := append([]string{"{"}, strings.Split(c.body, "\n")...)
		lines = append(lines, "}")
		at := func(l int) string { return lines[l-1] }
		if got := endFallsThrough(at, 1, len(lines)); got != c.want {
			t.Errorf("endFallsThrough(%q) = %v, want %v", c.body, got, c.want)
		}
	}
}
