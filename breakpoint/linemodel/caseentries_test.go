package linemodel

import (
	"slices"
	"testing"
)

// TestCaseValues reads the values of case labels as GCC gives them: C's
// integer and character constants, macros the file defines as one, and
// GNU ranges.
func TestCaseValues(t *testing.T) {
	defs := map[string]string{"OP_Permutation": "90", "ALIAS": "OP_Permutation", "NEG": "(-3)", "LOOP": "LOOP"}
	for _, tc := range []struct {
		line string
		want []int64
	}{
		{"case 'b':       /* ignore -- will request binary anyway */", []int64{98}},
		{"case '\\n':", []int64{10}},
		{"case '\\x41': x = 1; break;", []int64{65}},
		{"case ':':", []int64{58}},
		{"case 0x1F:", []int64{31}},
		{"case 017:", []int64{15}},
		{"case 42u: {", []int64{42}},
		{"case -1:", []int64{-1}},
		{"case OP_Permutation: {", []int64{90}},
		{"case ALIAS:", []int64{90}},
		{"case NEG:", []int64{-3}},
		{"case 1 ... 3:", []int64{1, 2, 3}},
		{"case LOOP:", nil},
		{"case ENUM_VALUE:", nil},
		{"case A + 1:", nil},
		{"default:", nil},
	} {
		got, ok := caseValues(tc.line, defs)
		if ok != (tc.want != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("caseValues(%q) = %v, %v; want %v", tc.line, got, ok, tc.want)
		}
	}
}

// TestDefinesOf keeps object-like macros with one definition and leaves
// out function-like ones, those defined twice differently and those in
// comments.
func TestDefinesOf(t *testing.T) {
	src := []string{
		"#define OP_Noop 188",
		"#  define TWICE 1",
		"#define TWICE 2",
		"#define SAME 7 /* a comment */",
		"#define SAME 7",
		"#define F(x) (x)",
		"/*",
		"#define HIDDEN 3",
		"*/",
		"#define CH 'b'",
	}
	var m Model
	d := m.definesOf("f.c", src)
	want := map[string]string{"OP_Noop": "188", "SAME": "7", "CH": "'b'"}
	if len(d) != len(want) {
		t.Errorf("definesOf = %v, want %v", d, want)
	}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("definesOf[%s] = %q, want %q", k, d[k], v)
		}
	}
}
