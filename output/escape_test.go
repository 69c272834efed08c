package output

import "testing"

func TestEscapeControl(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"/src/a.c", "/src/a.c"},
		{"/src/ünï.c", "/src/ünï.c"},
		{"a\nb", `a\nb`},
		{"a\tb\rc", `a\tb\rc`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"x\x7fy\x00", `x\x7fy\x00`},
		{"csi\u009b2J", `csi\u009b2J`},
		{"bad\xff\xc3", `bad\xff\xc3`},
		{`back\slash`, `back\slash`},
	} {
		if got := escapeControl(tc.in); got != tc.want {
			t.Errorf("escapeControl(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
