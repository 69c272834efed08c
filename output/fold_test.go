package output

import "testing"

// TestFoldSays: a folded row says what its lines are: code that never ran,
// lines without code (a comment block), or both.
func TestFoldSays(t *testing.T) {
	rows := func(counts ...string) []row {
		var out []row
		for i, c := range counts {
			out = append(out, row{file: "a.c", line: i + 1, count: c})
		}
		return out
	}
	for _, tc := range []struct {
		rows []row
		want string
	}{
		{rows("", "", "", "", "", "", "", "", ""), "5 lines without code"},
		{rows("#####", "#####", "#####", "#####", "#####", "#####", "#####"), "3 lines not executed"},
		{rows("", "#####", "#####", "", "", "", "", "#####", ""), "5 lines: 1 not executed, 4 without code"},
	} {
		out := fold(tc.rows)
		if len(out) != 2*foldContext+1 || out[foldContext].folded == 0 {
			t.Fatalf("fold made %d rows, want %d with one folded", len(out), 2*foldContext+1)
		}
		fr := out[foldContext]
		if got := foldText(fr.folded, fr.foldedNoCode); got != tc.want {
			t.Errorf("folded row says %q, want %q", got, tc.want)
		}
	}
}
