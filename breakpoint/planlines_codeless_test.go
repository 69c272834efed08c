package breakpoint

import "testing"

// TestEmptyIfElse keeps an if whose block and else block have no code as
// a statement of the block before it, placed after that block's last row.
func TestEmptyIfElse(t *testing.T) {
	for _, tc := range []struct {
		src  []string
		want bool
	}{
		{[]string{"if( isCov & 64 ){", "  TRACE(1, (\"x\"));", "}else{", "  assert( x );", "}", "y = 1;"}, true},
		{[]string{"if( isCov & 64 ){", "}else{", "  z = 2;", "}"}, false}, // line 3 has code
		{[]string{"if( isCov ){", "  TRACE(1);", "}", "y = 1;"}, false},   // no else
		{[]string{"if( a ){", "}else{", "}", "else{"}, false},
	} {
		coded := map[int]bool{}
		for k, l := range tc.src {
			if l == "  z = 2;" || l == "y = 1;" {
				coded[k+1] = true
			}
		}
		if got := emptyIfElse(tc.src, 1, coded); got != tc.want {
			t.Errorf("emptyIfElse(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
	rs := []fnRow{{addr: 0x10, ref: LineRef{"a.c", 4}}, {addr: 0x18, ref: LineRef{"a.c", 5}}, {addr: 0x20, ref: LineRef{"a.c", 9}}}
	if got := afterAbove(rs, "a.c", 6); got != 2 {
		t.Errorf("afterAbove(line 6) = %d, want 2 (after line 5's row)", got)
	}
}
