package breakpoint

import (
	"fmt"
	"testing"

	"github.com/patchprof/patchprof/lineinfo"
)

func TestCaseLabel(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"case 0:", true},
		{"case 'a':", true},
		{"case FOO + 1: {", true},
		{"default:", true},
		{"default: // the rest", true},
		{"case 10: { /* a comment that goes on", true},
		{"case 3: x++;", false}, // a statement on the line: it has a row of its own
		{"return a ? b : c;", false},
		{"again:", false}, // goto labels come from DW_TAG_label
		{"casework = 1;", false},
	} {
		if got := caseLabel.MatchString(tc.line); got != tc.want {
			t.Errorf("caseLabel(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

func TestCaseLabelThen(t *testing.T) {
	for line, want := range map[string]bool{
		"case TK_EXISTS:  testcase( x );": true,
		"default: nothing();":             true,
		"case 3:":                         false,
		"again: x++;":                     false,
	} {
		if got := caseLabelThen.MatchString(line); got != want {
			t.Errorf("caseLabelThen(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestCaseLabelAbove reads labels through preprocessor conditionals: a
// condition is known from another of its branches that has code.
func TestCaseLabelAbove(t *testing.T) {
	src := []string{
		/* 1 */ "#ifndef OMIT_A",
		/* 2 */ "  x = 1;",
		/* 3 */ "#endif",
		/* 4 */ "#ifdef B",
		/* 5 */ "  y = 1;",
		/* 6 */ "#else",
		/* 7 */ "  y = 2;",
		/* 8 */ "#endif",
		/* 9 */ "switch (v) {",
		/* 10 */ "case 1:",
		/* 11 */ "#ifndef OMIT_A",
		/* 12 */ "case 2:",
		/* 13 */ "#endif",
		/* 14 */ "  z = 1;",
		/* 15 */ "  break;",
		/* 16 */ "#ifdef B",
		/* 17 */ "case 3:",
		/* 18 */ "#endif",
		/* 19 */ "case 4: {",
		/* 20 */ "  z = 2;",
		/* 21 */ "#ifdef UNKNOWN",
		/* 22 */ "case 5:",
		/* 23 */ "#endif",
		/* 24 */ "case 6:",
		/* 25 */ "  z = 3;",
	}
	const file = "/src/a.c"
	lt := &lineinfo.Table{Files: []string{file}}
	rs := []fnRow{}
	firstAt := map[LineRef]uint64{}
	for k, l := range []int{2, 7, 9, 14, 15, 20, 25} {
		lt.Rows = append(lt.Rows, lineinfo.Row{Addr: uint64(16 * (k + 1)), Line: uint32(l)})
		rs = append(rs, fnRow{addr: uint64(16 * (k + 1)), ref: LineRef{File: file, Line: l}})
		firstAt[LineRef{File: file, Line: l}] = uint64(16 * (k + 1))
	}
	m := &lineModel{}
	for _, tc := range []struct{ first, want int }{
		{14, 10}, // OMIT_A is not defined: line 2 has code
		{20, 19}, // B is not defined: its #else has code
		{25, 24}, // UNKNOWN can't be told: the search stops there
	} {
		ref := LineRef{File: file, Line: tc.first}
		if got := m.caseLabelAbove(ref, firstAt[ref], src, lt, rs, firstAt); got != tc.want {
			t.Errorf("the label above line %d: %d, want %d", tc.first, got, tc.want)
		}
	}
}

func TestIsLambda(t *testing.T) {
	for name, want := range map[string]bool{
		"_ZZ4mainENKUliiE_clEii": true,
		"_ZZ4mainENKUliE0_clEi":  true,
		"_ZZ4mainENUlvE_4_FUNEv": true,
		"_ZN6PersonC1ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEi": false,
		"main": false,
	} {
		if got := isLambda(name); got != want {
			t.Errorf("isLambda(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestEndsStmt(t *testing.T) {
	for line, want := range map[string]bool{
		"  pOut->u.i = v;":                   true,
		"x = f(a); /* done */":               true,
		"goto jump_to_p2;":                   false, // code after it is dead
		"return;":                            false,
		"&& (b || c > d-(e+(i==k-1?0:2)))){": false, // a conditional's jmp ends no statement
		"x = f(a,":                           false,
	} {
		if got := endsStmt(line); got != want {
			t.Errorf("endsStmt(%q) = %v, want %v", line, got, want)
		}
	}
	for line, want := range map[string]bool{
		"break;": true, "continue;": true, "goto out;": true, "break_it();": false, "return;": true, "return x;": false,
	} {
		if got := jumpStmt.MatchString(line); got != want {
			t.Errorf("jumpStmt(%q) = %v, want %v", line, got, want)
		}
	}
	for line, want := range map[string]bool{
		"": true, "/* a comment": true, "** more of it": true, "assert( p!=0 );": true, "x = 1;": false, "}": false,
	} {
		if got := emptyStmt.MatchString(line); got != want {
			t.Errorf("emptyStmt(%q) = %v, want %v", line, got, want)
		}
	}
}

func TestForeverLoop(t *testing.T) {
	for line, want := range map[string]bool{
		"for(;;){": true, "for (;;)": true, "while( 1 /*Exit by break*/ ){": true, "while(1){ /* Exit by \"break\" */": true,
		"while( i<n ){": false, "for(i=0;;i++){": false, "} while(1);": false,
	} {
		if got := foreverLoop.MatchString(line); got != want {
			t.Errorf("foreverLoop(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestDeclaresAt tells a loop body that declares variables (GCC's goto
// back takes the brace's line) from one that does not (the first
// statement's).
func TestDeclaresAt(t *testing.T) {
	for _, tc := range []struct {
		src  []string
		want bool
	}{
		{[]string{"for(;;){", "  int lwr, upr;", "  x = 1;", "}"}, true},
		{[]string{"while(1){ /* { */", "  assert( p );", "  u8 *p = q;", "}"}, true},
		{[]string{"for(;;){", "  if( x ){", "    int y = 2;", "  }", "  x = f(\"}\");", "}", "int z;"}, false},
		{[]string{"for(;;){", "  return x;", "}"}, false},
	} {
		if got := declaresAt(tc.src, 1); got != tc.want {
			t.Errorf("declaresAt(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
}

// TestListLast lists a block under the highest line of its last file's
// run of lines, as gcov does after sorting each location group.
func TestListLast(t *testing.T) {
	keys := []LineRef{{"a.c", 10}, {"a.c", 9}, {"b.h", 3}, {"a.c", 12}, {"a.c", 11}}
	for _, tc := range []struct{ in, want []int32 }{
		{[]int32{1, 0}, []int32{1, 0}},             // 9, 10: already last
		{[]int32{0, 1}, []int32{1, 0}},             // 10, 9: listed under 10
		{[]int32{3, 2, 0, 1}, []int32{3, 2, 1, 0}}, // 12 is in the earlier a.c run
		{[]int32{4, 3, 1}, []int32{4, 1, 3}},
	} {
		ls := append([]int32(nil), tc.in...)
		listLast(keys, ls)
		if fmt.Sprint(ls) != fmt.Sprint(tc.want) {
			t.Errorf("listLast(%v) = %v, want %v", tc.in, ls, tc.want)
		}
	}
}

// TestVoidReturns reads a void function's return statements from its
// source: not in comments, not with no code in a conditional.
func TestVoidReturns(t *testing.T) {
	const file = "/src/a.c"
	closing := LineRef{File: file, Line: 6}
	rs := []fnRow{{addr: 1, ref: LineRef{File: file, Line: 1}}, {addr: 2, ref: LineRef{File: file, Line: 5}}}
	for _, tc := range []struct {
		body []string
		want bool
	}{
		{[]string{"  x = 1;", "  return;", "  y = 2;", "  z = 3;"}, true},
		{[]string{"  x = 1; /* return; */", "  // return;", "  y = 2;", "  z = 3;"}, false},
		{[]string{"#ifdef ARMOR", "  if( p==0 ) return;", "#endif", "  z = 3;"}, false},
		{[]string{"  if( h==s ) break;", "  y = 2;", "  if( p ) { return; }", "  z = 3;"}, true},
	} {
		src := append(append([]string{"void f(void){"}, tc.body...), "}")
		if got := voidReturns(rs, nil, 0, 0, closing, src); got != tc.want {
			t.Errorf("voidReturns(%q) = %v, want %v", tc.body, got, tc.want)
		}
	}
}

// TestEmptyIf keeps an if with an empty block as a statement only when
// its condition loads through a pointer.
func TestEmptyIf(t *testing.T) {
	for _, tc := range []struct {
		src  []string
		want bool
	}{
		{[]string{"if( p->pDestDb ){", "  mutex_enter(p->pDestDb->mutex);", "}", "rc = 1;"}, true},
		{[]string{"if( dupFlags ){", "  SetProperty(pNew);", "}", "rc = 1;"}, false}, // a local: no statement
		{[]string{"if( p->x ){", "  nothing();", "}else{", "  y = 1;"}, false},
		{[]string{"if( a[i] ){", "  x = 1;", "}"}, false}, // line 2 has code
	} {
		coded := map[int]bool{4: true}
		if tc.src[1] == "  x = 1;" {
			coded[2] = true
		}
		if got := emptyIf(tc.src, 1, coded); got != tc.want {
			t.Errorf("emptyIf(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
}

func TestUserAndControlLines(t *testing.T) {
	for line, want := range map[string]bool{
		"jump_to_p2_and_check_for_interrupt:": true, "opendb_out: /* done */": true,
		"default:": true, // caseLabel is asked first
		"case 3:":  false, "x = a ? b : c;": false,
	} {
		if got := userLabel.MatchString(line); got != want {
			t.Errorf("userLabel(%q) = %v, want %v", line, got, want)
		}
	}
	for line, want := range map[string]bool{
		"if( pOp->p5 ){": true, "for(i=0; i<n; i++){": true, "}else if( x ){": true,
		"x = 1;": false, "assert( p );": false, "ifdef(x);": false,
	} {
		if got := controlStmt.MatchString(line); got != want {
			t.Errorf("controlStmt(%q) = %v, want %v", line, got, want)
		}
	}
}
