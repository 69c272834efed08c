package linemodel

import (
	"fmt"
	"testing"

	"github.com/patchprof/patchprof/lineinfo"
)

// TestOwnLabelBlock tells a goto label GCC keeps as a block of its own
// (the statement after it starts behind a label of GCC's) from one merged
// with the statements after it.
func TestOwnLabelBlock(t *testing.T) {
	for _, tc := range []struct {
		next  []string // the lines after `out:`
		rowed []int    // which of them have rows (1-based, after the label)
		want  bool
	}{
		{[]string{"  assert( p );", "  for(;;){", "    x++;"}, []int{3}, true},
		{[]string{"  do{", "    x++;"}, []int{2}, true},
		{[]string{"  while( 1 ){", "    x++;"}, []int{2}, true},
		{[]string{"  if( db ){", "    assert( db );", "  }", "  rc = f(db);"}, []int{4}, true}, // an if compiled to nothing
		{[]string{"  if( rc ){", "    g();", "  }"}, []int{1, 2}, false},
		{[]string{"  for(i=0; i<n; i++){", "    x++;"}, []int{1, 2}, false},
		{[]string{"  for(; i<n; i++){", "    x++;"}, []int{1, 2}, false},
		{[]string{"  x = 1;"}, []int{1}, false},
		{[]string{"#ifdef P", "  for(;;){"}, []int{2}, false},
	} {
		src := append([]string{"out:"}, tc.next...)
		rowed := map[int]bool{}
		for _, l := range tc.rowed {
			rowed[l+1] = true
		}
		if got := ownLabelBlock(src, 1, func(l int) bool { return rowed[l] }); got != tc.want {
			t.Errorf("out: then %q: ownLabelBlock = %v, want %v", tc.next, got, tc.want)
		}
	}
}

// TestLabelDest takes a label at a goto_locus nop for the block the nop
// goes to, and a label at a statement for its own block.
func TestLabelDest(t *testing.T) {
	code := []byte{
		0x85, 0xc0, // 0x1000 test %eax,%eax
		0x74, 0x03, // 0x1002 je 0x1007
		0x90,       // 0x1004 nop   (a goto's row; the label's address)
		0xeb, 0x00, // 0x1005 jmp 0x1007
		0xf7, 0xd8, // 0x1007 neg %eax
		0xc3, // 0x1009 ret
	}
	g := joinGraph(t, 0x1000, code)
	at := func(a uint64) int {
		b, ok := g.BlockAt(a)
		if !ok || g.Blocks[b].Start != a {
			t.Fatalf("no block starts at %#x", a)
		}
		return b
	}
	nops := codeNops(code, 0x1000)
	if got, want := labelDest(g, at(0x1004), nops), at(0x1007); got != want {
		t.Errorf("labelDest(nop) = %d, want %d", got, want)
	}
	if got, want := labelDest(g, at(0x1007), nops), at(0x1007); got != want {
		t.Errorf("labelDest(statement) = %d, want %d", got, want)
	}
}

// TestIsCaseLabel reads a label whose constant is a brace or semicolon
// character, or after a comment.
func TestIsCaseLabel(t *testing.T) {
	for line, want := range map[string]bool{
		"case '{': {":                    true,
		"case ';': {  /* A semicolon */": true,
		"/*case PragTyp_X*/ default: {":  true,
		"case 3:":                        true,
		"x = y ? '{' : '}';":             false,
		"while( c==';' ){":               false,
	} {
		if got := isCaseLabel(line); got != want {
			t.Errorf("isCaseLabel(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestEvaluatedLater takes the lines of a call whose arguments GCC
// evaluates first, in any order of its lines, for one statement; a line
// with code before the block is not.
func TestEvaluatedLater(t *testing.T) {
	ref := func(l int) LineRef { return LineRef{"a.c", l} }
	rs := []fnRow{
		{addr: 0x08, ref: ref(1)}, // line 1 also has code before the block
		{addr: 0x10, ref: ref(5)}, {addr: 0x18, ref: ref(3)}, {addr: 0x20, ref: ref(4)}, {addr: 0x28, ref: ref(3)},
	}
	firstAt := map[LineRef]uint64{ref(1): 0x08, ref(3): 0x18, ref(4): 0x20, ref(5): 0x10}
	for _, tc := range []struct {
		l    int
		a    uint64
		want bool
	}{
		{4, 0x20, true}, // rows of 5 and of 3, which starts in the block
		{3, 0x18, true},
		{1, 0x08, false},
	} {
		if got := evaluatedLater(rs, firstAt, ref(5), tc.l, 0x10, tc.a); got != tc.want {
			t.Errorf("evaluatedLater(line %d) = %v, want %v", tc.l, got, tc.want)
		}
	}
	rs[2].ref = ref(1) // line 1, with code before the block, again inside it
	if evaluatedLater(rs, firstAt, ref(5), 4, 0x10, 0x20) {
		t.Error("a row of a line with code before the block is taken for the statement's")
	}
}

// TestOnlyCaseLabels reads over a conditional that cannot be told but
// holds only case labels: the label above it is GCC's either way.
func TestOnlyCaseLabels(t *testing.T) {
	src := []string{
		/* 1 */ "switch( e ){",
		/* 2 */ "  case ERANGE:",
		/* 3 */ "#ifdef ENXIO",
		/* 4 */ "  case ENXIO:  /* no such device */",
		/* 5 */ "#endif",
		/* 6 */ "    return 1;",
		/* 7 */ "#ifdef LEGACY",
		/* 8 */ "    f(0);",
		/* 9 */ "#endif",
		/* 10 */ "  case 3:",
		/* 11 */ "    return 2;",
	}
	if !onlyCaseLabels(src, 5) {
		t.Error("lines 3-5 hold only a case label")
	}
	if onlyCaseLabels(src, 9) {
		t.Error("lines 7-9 hold a call")
	}
	const file = "/src/a.c"
	lt := &lineinfo.Table{Files: []string{file}}
	rs := []fnRow{{addr: 0x10, ref: LineRef{File: file, Line: 1}}, {addr: 0x20, ref: LineRef{File: file, Line: 6}}}
	firstAt := map[LineRef]uint64{rs[0].ref: 0x10, rs[1].ref: 0x20}
	m := &Model{}
	if got := m.caseLabelAbove(rs[1].ref, 0x20, src, lt, rs, firstAt); got != 2 {
		t.Errorf("the label above line 6: %d, want 2", got)
	}
}

// TestCompiledOutCall tells a branch compiled out when it calls one of the
// program's functions and has no row: the case label above it is found.
func TestCompiledOutCall(t *testing.T) {
	src := []string{
		/* 1 */ "switch( t ){",
		/* 2 */ "  case 5: {",
		/* 3 */ "#ifdef LEGACY",
		/* 4 */ "    result_int(ctx, 0);",
		/* 5 */ "#endif",
		/* 6 */ "    return;",
		/* 7 */ "  }",
		/* 8 */ "}",
	}
	const file = "/src/a.c"
	lt := &lineinfo.Table{Files: []string{file}}
	var rs []fnRow
	firstAt := map[LineRef]uint64{}
	for k, l := range []int{1, 6, 8} {
		lt.Rows = append(lt.Rows, lineinfo.Row{Addr: uint64(16 * (k + 1)), Line: uint32(l)})
		rs = append(rs, fnRow{addr: uint64(16 * (k + 1)), ref: LineRef{File: file, Line: l}})
		firstAt[LineRef{File: file, Line: l}] = uint64(16 * (k + 1))
	}
	for _, tc := range []struct {
		funcs map[string]bool
		want  int
	}{
		{map[string]bool{"result_int": true}, 2},
		{map[string]bool{}, 0}, // a macro may expand to nothing: can't tell
	} {
		m := &Model{funcNames: tc.funcs}
		if got := m.caseLabelAbove(rs[1].ref, 32, src, lt, rs, firstAt); got != tc.want {
			t.Errorf("functions %v: the label above line 6: %d, want %d", tc.funcs, got, tc.want)
		}
	}
}

// TestCaseLabelFarAbove finds a default label above a long run of
// compiled-out statements (a generated parser's rules).
func TestCaseLabelFarAbove(t *testing.T) {
	src := []string{"switch( r ){", "  default:"}
	for i := 0; i < 100; i++ {
		src = append(src, "  /* (n) rule */ testcase(r==n);")
	}
	src = append(src, "    break;", "}")
	const file = "/src/a.c"
	brk := LineRef{File: file, Line: len(src) - 1}
	lt := &lineinfo.Table{Files: []string{file}, Rows: []lineinfo.Row{{Addr: 0x10, Line: 1}, {Addr: 0x20, Line: uint32(brk.Line)}}}
	rs := []fnRow{{addr: 0x10, ref: LineRef{File: file, Line: 1}}, {addr: 0x20, ref: brk}}
	firstAt := map[LineRef]uint64{rs[0].ref: 0x10, brk: 0x20}
	if got := (&Model{}).caseLabelAbove(brk, 0x20, src, lt, rs, firstAt); got != 2 {
		t.Errorf("the label above the break: %d, want 2", got)
	}
}

// TestFoldedJump finds the if whose then block leaves right above a
// continue, and the else block (declaring variables) the continue is in.
func TestFoldedJump(t *testing.T) {
	src := []string{
		/* 1 */ "while( c ){",
		/* 2 */ "  if( a ){",
		/* 3 */ "    x = 1;",
		/* 4 */ "  }else{",
		/* 5 */ "    int seen = 0;",
		/* 6 */ "    if( c2==0 || seen==0 ){",
		/* 7 */ "      return 1;",
		/* 8 */ "    }",
		/* 9 */ "    continue;",
		/* 10 */ "  }",
		/* 11 */ "  if( b ){",
		/* 12 */ "    y = 2;",
		/* 13 */ "  }",
		/* 14 */ "  break;",
		/* 15 */ "}",
	}
	firstAt := map[int]uint64{1: 0x10, 2: 0x14, 3: 0x18, 5: 0x20, 6: 0x24, 7: 0x30, 11: 0x40, 12: 0x48}
	if ifl, then := leavingIfAbove(src, 9, firstAt); ifl != 6 || then != 0x30 {
		t.Errorf("leavingIfAbove(9) = %d, %#x; want 6, 0x30", ifl, then)
	}
	if ifl, _ := leavingIfAbove(src, 14, firstAt); ifl != 0 {
		t.Errorf("leavingIfAbove(14) = %d, want 0 (the then block does not leave)", ifl)
	}
	if got := enclosingBrace(src, 9); got != 4 {
		t.Errorf("enclosingBrace(9) = %d, want 4", got)
	}
	if !elseDeclares(src, 4) {
		t.Error("the else block at line 4 declares seen")
	}
	if elseDeclares(src, 2) {
		t.Error("line 2 opens no else block")
	}
}

// TestOnlyJumpIf finds the if whose then block is only a break, and the
// code after it; an if with an else, or more in its block, is not one.
func TestOnlyJumpIf(t *testing.T) {
	src := []string{
		/* 1 */ "for(i=0; 1; i++){",
		/* 2 */ "  if( i==n-1 ){",
		/* 3 */ "    break;",
		/* 4 */ "  }",
		/* 5 */ "  x++;",
		/* 6 */ "  if( y ){",
		/* 7 */ "    break;",
		/* 8 */ "  }",
		/* 9 */ "  else z++;",
		/* 10 */ "}",
	}
	firstAt := map[int]uint64{1: 0x10, 2: 0x20, 5: 0x30, 6: 0x40, 9: 0x50}
	if ifl, after := onlyJumpIf(src, 3, firstAt); ifl != 2 || after != 0x30 {
		t.Errorf("onlyJumpIf(3) = %d, %#x; want 2, 0x30", ifl, after)
	}
	if ifl, _ := onlyJumpIf(src, 7, firstAt); ifl != 0 {
		t.Errorf("onlyJumpIf(7) = %d, want 0 (an else follows)", ifl)
	}
	// Single jumps out of a scope with clobbers have copies too.
	scope := []string{"for(;;){", "  int v;", "  if( g(&v) ){", "    break;", "  }", "  h();", "}"}
	if got := fmt.Sprint(exitsOf(scope, 1, len(scope), nil, true)); got != "[[4]]" {
		t.Errorf("exitsOf(single) = %s, want [[4]]", got)
	}
	if got := fmt.Sprint(exitsOf(scope, 1, len(scope), nil, false)); got != "[]" {
		t.Errorf("exitsOf = %s, want []", got)
	}
}

// TestEmptyElseIf finds an else-if whose block compiles to nothing and
// the if it is the else branch of; one with code, or behind a
// conditional, is not one.
func TestEmptyElseIf(t *testing.T) {
	src := []string{
		/* 1 */ "if( p->flags & 4 ){",
		/* 2 */ "  if( p->p3 ){ Taken(1, 2); }",
		/* 3 */ "  q = p->a;",
		/* 4 */ "}else if( ALWAYS(p->p3) ){",
		/* 5 */ "  Taken(0, 2);",
		/* 6 */ "}",
		/* 7 */ "if( a ){",
		/* 8 */ "  b();",
		/* 9 */ "}else if( p->x ){",
		/* 10 */ "#ifdef X",
		/* 11 */ "  c();",
		/* 12 */ "#endif",
		/* 13 */ "}",
	}
	firstAt := map[int]uint64{1: 0x10, 3: 0x20, 7: 0x30, 8: 0x38}
	if !emptyElseIf(src, 4, firstAt) {
		t.Error("line 4 is an empty else-if")
	}
	if emptyElseIf(src, 9, firstAt) {
		t.Error("line 9's block may hold compiled code")
	}
	if ifl, then := ifOfElse(src, 4, firstAt); ifl != 1 || then != 0x20 {
		t.Errorf("ifOfElse(4) = %d, %#x; want 1, 0x20", ifl, then)
	}
}
