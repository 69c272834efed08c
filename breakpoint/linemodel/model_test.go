package linemodel

import (
	"fmt"
	"testing"

	"github.com/patchprof/patchprof/cfg"
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
	m := &Model{}
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
		if got := voidReturns(rs, nil, 0, 0, closing, src, nil); got != tc.want {
			t.Errorf("voidReturns(%q) = %v, want %v", tc.body, got, tc.want)
		}
	}
}

// TestReturnMacros finds the macros of a file that expand to a return
// statement (unity's RETURN_IF_FAIL_OR_IGNORE), and voidReturns counts a
// use of one as a return.
func TestReturnMacros(t *testing.T) {
	src := []string{
		"#define RETURN_IF_FAIL if (failed) return",
		"#define BAIL(x) { log(x); \\",
		"    return; }",
		"#define NOT_RETURN(x) returned(x)",
		"#define VALUE return 1",
		"void f(void){",
		"  x = 1;",
		"  RETURN_IF_FAIL;",
		"  y = 2;",
		"}",
	}
	m := &Model{}
	got := m.returnMacros("/src/a.c", src)
	if fmt.Sprint(got) != "map[BAIL:true RETURN_IF_FAIL:true]" {
		t.Errorf("returnMacros = %v, want BAIL and RETURN_IF_FAIL", got)
	}
	rs := []fnRow{{addr: 1, ref: LineRef{File: "/src/a.c", Line: 6}}, {addr: 2, ref: LineRef{File: "/src/a.c", Line: 9}}}
	closing := LineRef{File: "/src/a.c", Line: 10}
	if !voidReturns(rs, nil, 0, 0, closing, src, got) {
		t.Errorf("voidReturns: RETURN_IF_FAIL; not read as a return")
	}
	src[7] = "  NOT_RETURN(1); RETURN_IF_FAILED;"
	if voidReturns(rs, nil, 0, 0, closing, src, got) {
		t.Errorf("voidReturns: %q read as a return", src[7])
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
		{[]string{"if( pOp->p3 ){ BranchTaken(1, 2); }", "pOp = &aOp[i];"}, true},
		{[]string{"if( pOp->p3 ){ BranchTaken(1, 2); }", "else x = 1;"}, false},
		{[]string{"if( p3 ){ BranchTaken(1, 2); }", "pOp = &aOp[i];"}, false},
	} {
		coded := map[int]bool{4: true}
		if tc.src[1] == "  x = 1;" {
			coded[2] = true
		}
		if got := emptyIf(newSrcText(tc.src), 1, coded); got != tc.want {
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

// TestMarkElseJumps drops the row of an if line on a jump past the else
// that GCC gives no location (a lone forward jmp or nop after the branch's
// statements), not when the branch declares variables (its BIND_EXPR
// lends the goto its brace's location), not on a backward jmp.
func TestMarkElseJumps(t *testing.T) {
	const file = "/src/a.c"
	src := []string{
		/* 1 */ "void f(void){",
		/* 2 */ "  if( a ){",
		/* 3 */ "    g();",
		/* 4 */ "  }else{",
		/* 5 */ "    h();",
		/* 6 */ "  }",
		/* 7 */ "  }else if( b ){",
		/* 8 */ "    int x = g();",
		/* 9 */ "  }",
		/* 10 */ "  x = 1;",
		/* 11 */ "  x = 2;",
		/* 12 */ "}",
	}
	code := []byte{
		0x90,       // 0x100 line 2
		0x90,       // 0x101 line 3
		0xeb, 0x02, // 0x102 line 2: jmp past the else, dropped
		0x90,       // 0x104 line 5
		0x90,       // 0x105 line 8
		0xeb, 0x00, // 0x106 line 7: its branch declares x, kept
		0x90,       // 0x108 line 11
		0xeb, 0xf5, // 0x109 line 2: backward, kept
		0x90, // 0x10b line 10
		0x90, // 0x10c line 2: a lone nop at the end of the if, dropped
		0x90, // 0x10d line 11
	}
	lines := []struct {
		addr uint64
		line int
		drop bool
	}{
		{0x100, 2, false}, {0x101, 3, false}, {0x102, 2, true}, {0x104, 5, false}, {0x105, 8, false},
		{0x106, 7, false}, {0x108, 11, false}, {0x109, 2, false}, {0x10b, 10, false}, {0x10c, 2, true}, {0x10d, 11, false},
	}
	rs := make([]fnRow, len(lines))
	for k, l := range lines {
		rs[k] = fnRow{addr: l.addr, ref: LineRef{File: file, Line: l.line}}
	}
	markElseJumps(rs, code, 0x100, src)
	for k, l := range lines {
		if rs[k].drop != l.drop {
			t.Errorf("row %#x (line %d): drop %v, want %v", l.addr, l.line, rs[k].drop, l.drop)
		}
	}
}

// joinGraph builds the graph of code at addr for the jump tests.
func joinGraph(t *testing.T, addr uint64, code []byte) *cfg.Graph {
	t.Helper()
	g, err := cfg.Build(cfg.Options{Name: "f", Addr: addr, Code: code})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestDropJoinJumps takes a break's line off a block whose forward jmp
// has the break's row and goes to the break's own block (`if( r )
// x = -x; break;`), not a loop's first jmp to its condition.
func TestDropJoinJumps(t *testing.T) {
	code := []byte{
		0x85, 0xc0, // 0x1000 test %eax,%eax   line 2
		0x75, 0x04, // 0x1002 jne 0x1008
		0xf7, 0xd8, // 0x1004 neg %eax         line 2
		0xeb, 0x03, // 0x1006 jmp 0x100b       line 3
		0xf7, 0xdb, // 0x1008 neg %ebx         line 4
		0xc3, // 0x100a ret
		0x90, // 0x100b nop              line 3
		0xc3, // 0x100c ret              line 5
	}
	g := joinGraph(t, 0x1000, code)
	for _, tc := range []struct {
		line3 string
		want  int // lines left in the block at 0x1004
	}{
		{"    break;", 1},
		{"  while( x ){", 2},
	} {
		src := []string{"void f(void){", "  if( r ) x = -x;", tc.line3, "  y = 1;", "}"}
		m := &Model{keys: []LineRef{{"a.c", 2}, {"a.c", 3}, {"a.c", 4}, {"a.c", 5}}}
		mf := &modelFunc{blocks: make([][]lineAt, len(g.Blocks))}
		at := func(a uint64) int {
			b, ok := g.BlockAt(a)
			if !ok {
				t.Fatalf("no block at %#x", a)
			}
			return b
		}
		mf.blocks[at(0x1000)] = []lineAt{{0, 0x1000}}
		mf.blocks[at(0x1004)] = []lineAt{{0, 0x1004}, {1, 0x1006}}
		mf.blocks[at(0x1008)] = []lineAt{{2, 0x1008}}
		mf.blocks[at(0x100b)] = []lineAt{{1, 0x100b}, {3, 0x100c}}
		dropJoinJumps(m, g, mf, func(string) ([]string, bool) { return src, true })
		if got := len(mf.blocks[at(0x1004)]); got != tc.want {
			t.Errorf("line 3 %q: %d lines left in the block at 0x1004, want %d", tc.line3, got, tc.want)
		}
	}
}

// TestOnlyGotoLocus finds a jump statement whose only row is a nop that
// goes where a block's jmp goes.
func TestOnlyGotoLocus(t *testing.T) {
	code := []byte{
		0x85, 0xc0, // 0x2000 test %eax,%eax  line 1
		0x74, 0x04, // 0x2002 je 0x2008
		0xf7, 0xd8, // 0x2004 neg %eax        line 2
		0xeb, 0x03, // 0x2006 jmp 0x200b
		0x90,       // 0x2008 nop             line 3
		0xeb, 0x00, // 0x2009 jmp 0x200b
		0xc3, // 0x200b ret             line 4
	}
	g := joinGraph(t, 0x2000, code)
	rs := []fnRow{
		{addr: 0x2000, ref: LineRef{"a.c", 1}}, {addr: 0x2004, ref: LineRef{"a.c", 2}},
		{addr: 0x2008, ref: LineRef{"a.c", 3}}, {addr: 0x200b, ref: LineRef{"a.c", 4}},
	}
	b, _ := g.BlockAt(0x2004)
	if !onlyGotoLocus(g, rs, codeNops(code, 0x2000), LineRef{"a.c", 3}, g.Succs(b)) {
		t.Error("the nop of line 3 is not taken for its goto_locus")
	}
	if onlyGotoLocus(g, rs, codeNops(code, 0x2000), LineRef{"a.c", 2}, g.Succs(b)) {
		t.Error("line 2, with code, is taken for a goto_locus")
	}
}

// TestExitsOf groups the jumps leaving a scope that takes a local's
// address by destination, when the scope has two or more ways out; a
// bitwise and, &p->f and a scope with one way out have no copies.
func TestExitsOf(t *testing.T) {
	src := []string{
		/* 1 */ "int f(int *a, int n){",
		/* 2 */ "  for(;;){",
		/* 3 */ "    switch( n ){",
		/* 4 */ "      case 1: {",
		/* 5 */ "        int v;",
		/* 6 */ "        if( g(&v) ){ n = 0; break; }",
		/* 7 */ "        if( v ) goto out;",
		/* 8 */ "        n = v;",
		/* 9 */ "        break;",
		/* 10 */ "      }",
		/* 11 */ "      case 2: {",
		/* 12 */ "        int w = n & 1;",
		/* 13 */ "        if( w & n ) break;",
		/* 14 */ "        if( h(&a->x) ) goto out;",
		/* 15 */ "        break;",
		/* 16 */ "      }",
		/* 17 */ "      case 3: {",
		/* 18 */ "        int u;",
		/* 19 */ "        if( g(&u) ) break;",
		/* 20 */ "        break;",
		/* 21 */ "      }",
		/* 22 */ "    }",
		/* 23 */ "  }",
		/* 24 */ "out:",
		/* 25 */ "  return n;",
		/* 26 */ "}",
	}
	got := fmt.Sprint(exitsOf(src, 1, len(src), nil, false))
	if want := "[[6 9]]"; got != want {
		t.Errorf("exitsOf = %s, want %s", got, want)
	}
}

// TestCallTail drops the call's line from the block that stores the call's
// result and runs on into the next statement's row, and keeps it on a
// block that is only the store (a jump target follows): in GCC's graph
// that store and the call are one block (`for(...; p = next(p))`).
func TestCallTail(t *testing.T) {
	for _, tc := range []struct {
		name string
		addr uint64 // the block after the call
		code []byte
		rows []uint64 // line 1, 2, 3 start here
		want bool
	}{
		{"runs on into line 3", 0x1005, []byte{
			0xe8, 0xfb, 0x1f, 0x00, 0x00, // 0x1000 call 0x3000     line 2
			0x89, 0x45, 0xfc, // 0x1005 mov %eax,-0x4(%rbp)
			0x8b, 0x45, 0xfc, // 0x1008 mov -0x4(%rbp),%eax  line 3
			0xc3, // 0x100b ret
		}, []uint64{0x1000, 0x1000, 0x1008}, true},
		{"only the store", 0x1009, []byte{
			0x85, 0xc0, // 0x1000 test %eax,%eax     line 1
			0x74, 0x08, // 0x1002 je 0x100c
			0xe8, 0xf7, 0x1f, 0x00, 0x00, // 0x1004 call 0x3000     line 2
			0x89, 0x45, 0xfc, // 0x1009 mov %eax,-0x4(%rbp)
			0x8b, 0x45, 0xfc, // 0x100c mov -0x4(%rbp),%eax  line 3
			0xc3, // 0x100f ret
		}, []uint64{0x1000, 0x1004, 0x100c}, false},
	} {
		g, err := cfg.Build(cfg.Options{Name: "f", Addr: 0x1000, Code: tc.code, SplitCalls: true})
		if err != nil {
			t.Fatal(err)
		}
		var rs []fnRow
		for k, a := range tc.rows {
			rs = append(rs, fnRow{addr: a, ref: LineRef{"a.c", k + 1}})
		}
		b, ok := g.BlockAt(tc.addr)
		if !ok || g.Blocks[b].Start != tc.addr {
			t.Fatalf("%s: no block starts at %#x", tc.name, tc.addr)
		}
		if got := callTail(g, b, rs, tc.code, 0x1000); got != tc.want {
			t.Errorf("%s: callTail = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestTakesAddressCast takes `(T*)&v` for v's address, and `(a)&v` for a
// bitwise and.
func TestTakesAddressCast(t *testing.T) {
	for line, want := range map[string]bool{
		"  getVarint(p, (u64*)&v);": true,
		"  x = (u8 *) & v;":         true,
		"  x = (a)&v;":              false,
		"  x = b&v;":                false,
	} {
		src := []string{"{", "  long v;", line, "}"}
		s := scopes(src, 1, len(src))
		if got := takesAddress(s[0], func(l int) string { return src[l-1] }); got != want {
			t.Errorf("takesAddress(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestOnlyEntry finds the block two jumps go to when nothing else enters
// it (GCC merges a copy of clobbers into it), and none when the code
// above falls into it too.
func TestOnlyEntry(t *testing.T) {
	code := []byte{
		0x85, 0xc0, // 0x1000 test %eax,%eax
		0x74, 0x04, // 0x1002 je 0x1008
		0xf7, 0xd8, // 0x1004 neg %eax
		0xeb, 0x04, // 0x1006 jmp 0x100c
		0xf7, 0xdb, // 0x1008 neg %ebx
		0xeb, 0x00, // 0x100a jmp 0x100c
		0xc3, // 0x100c ret
	}
	g := joinGraph(t, 0x1000, code)
	at := func(a uint64) int {
		b, ok := g.BlockAt(a)
		if !ok {
			t.Fatalf("no block at %#x", a)
		}
		return b
	}
	if got, want := onlyEntry(g, []int{at(0x1004), at(0x1008)}), at(0x100c); got != want {
		t.Errorf("onlyEntry of both jumps = %d, want %d", got, want)
	}
	if got := onlyEntry(g, []int{at(0x1004)}); got != -1 {
		t.Errorf("onlyEntry of one of two ways in = %d, want -1", got)
	}
}

// TestInDeadIf: an if with no code inside one whose condition GCC folds
// to false (zlib's sizeof test) is no statement of GCC's.
func TestInDeadIf(t *testing.T) {
	src := []string{
		"if (sizeof(int) <= 2) {",
		"    if (more == 0 && s->strstart == 0) {",
		"        more = wsize;",
		"    }",
		"}",
		"x = 1;",
	}
	coded := map[int]bool{6: true}
	if emptyIf(newSrcText(src), 2, coded) {
		t.Errorf("emptyIf: the if inside a folded if is a statement")
	}
	src[0] = "if (p->big) {"
	if !emptyIf(newSrcText(src), 2, coded) {
		t.Errorf("emptyIf: the if inside an if that reads memory is no statement")
	}
}
