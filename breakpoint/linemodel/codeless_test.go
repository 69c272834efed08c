package linemodel

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/lineinfo"
)

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
		if got := emptyIfElse(newSrcText(tc.src), 1, coded); got != tc.want {
			t.Errorf("emptyIfElse(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
	rs := []fnRow{{addr: 0x10, ref: LineRef{"a.c", 4}}, {addr: 0x18, ref: LineRef{"a.c", 5}}, {addr: 0x20, ref: LineRef{"a.c", 9}}}
	if got := afterAbove(rs, "a.c", 6); got != 2 {
		t.Errorf("afterAbove(line 6) = %d, want 2 (after line 5's row)", got)
	}
}

// TestDeclOnLoopHead moves the declarator line onto the head of a loop
// the body starts with, which the back edge enters, and leaves it when
// the first statement is no such loop.
func TestDeclOnLoopHead(t *testing.T) {
	code := []byte{
		0x55,             // 0x1000 push %rbp          line 1 (declarator)
		0x48, 0x89, 0xe5, // 0x1001 mov %rsp,%rbp
		0xf7, 0xd8, // 0x1004 neg %eax            line 3
		0x75, 0xfc, // 0x1006 jne 0x1004
		0xc3, // 0x1008 ret               line 5
	}
	g := joinGraph(t, 0x1000, code)
	for _, tc := range []struct {
		line2 string
		moved bool
	}{
		{"  while( 1 ){", true},
		{"  for(;;){", true},
		{"  x = 0;", false},
	} {
		src := []string{"int f(int x){", tc.line2, "    x = -x;", "  }", "}"}
		m := &Model{keys: []LineRef{{"a.c", 1}, {"a.c", 3}, {"a.c", 5}}}
		mf := &modelFunc{blocks: make([][]lineAt, len(g.Blocks))}
		b0, _ := g.BlockAt(0x1000)
		h, _ := g.BlockAt(0x1004)
		r, _ := g.BlockAt(0x1008)
		mf.blocks[b0] = []lineAt{{0, 0x1000}}
		mf.blocks[h] = []lineAt{{1, 0x1004}}
		mf.blocks[r] = []lineAt{{2, 0x1008}}
		declOnLoopHead(m, g, mf, 0x1000, 0, func(string) ([]string, bool) { return src, true })
		if got := len(mf.blocks[b0]) == 0 && len(mf.blocks[h]) == 2 && mf.blocks[h][0].line == 0; got != tc.moved {
			t.Errorf("%q: moved %v, want %v (blocks %v)", tc.line2, got, tc.moved, mf.blocks)
		}
	}
}

// TestLocalsInMemory takes a local for one in memory when it is an
// aggregate or when the code takes its frame slot's address (lea from
// %rbp at the DWARF offset from the CFA plus 16), and a scope for one
// that needs clobbers when it declares such a local.
func TestLocalsInMemory(t *testing.T) {
	code := []byte{
		0x48, 0x8d, 0x45, 0xec, // lea -0x14(%rbp),%rax: the slot of t (CFA-36)
		0x8b, 0x45, 0xe8, // mov -0x18(%rbp),%eax: u is only read
		0xc3,
	}
	locals := []lineinfo.Local{
		{Name: "t", Line: 3, FrameOffset: -36},
		{Name: "u", Line: 3, FrameOffset: -40},
		{Name: "s", Line: 7, FrameOffset: -64, Aggregate: true},
	}
	mem := localsInMemory(locals, code)
	for name, want := range map[string]bool{"t": true, "u": false, "s": true} {
		if got := len(mem[name]) > 0; got != want {
			t.Errorf("%s in memory: %v, want %v", name, got, want)
		}
	}
	if !mem.declares(scope{open: 2, close: 5, names: []string{"u", "t"}}) {
		t.Error("a scope declaring t does not need clobbers")
	}
	if mem.declares(scope{open: 8, close: 9, names: []string{"t"}}) {
		t.Error("another t, declared outside lines 2-5, needs clobbers")
	}
}

// TestElseAfterJump tells the end of an else block whose then block
// leaves (the code after the if is the else block's) from others.
func TestElseAfterJump(t *testing.T) {
	for _, tc := range []struct {
		src  []string
		want bool
	}{
		{[]string{"if( a ){", "  f();", "  goto out;", "}else{", "  /* note */", "  g(&v);", "}", "goto next;"}, true},
		{[]string{"if( a ){", "  f();", "}else{", "  g(&v);", "}", "goto next;"}, false},
		{[]string{"if( a ){", "  return 1;", "}", "goto next;"}, false}, // no else: the if's false edge joins too
		{[]string{"if( a ){", "  break;", "}else{", "  if( b ){", "    g();", "  }", "}", "break;"}, true},
	} {
		end := len(tc.src) - 1 // the closing brace before the jump
		if got := elseAfterJump(tc.src, end); got != tc.want {
			t.Errorf("elseAfterJump(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}
}

// TestIdleAssign accepts an assignment with no row only in straight-line
// code, between a statement (or a block's opening or closing brace) above
// and a plain statement below, with only blank lines, comments and
// row-less call statements between.
func TestIdleAssign(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  []string // line 2 is the candidate; lines marked "@" have rows
		want bool
	}{
		{"straight", []string{"@x = f();", "flags |= O_RDONLY;", "@y = 1;"}, true},
		{"then block", []string{"@if( p==0 ){", "n = ROUND8P(n);", "@if( n > 3 ){"}, true},
		{"after a block", []string{"}", "r |= NONE;", "@return r;"}, true},
		{"fillers", []string{"@rc = g();", "rc = JOIN(p, rc);", "", "DEBUG(\"x\");", "/* note */", "@h();"}, true},
		{"member", []string{"@x = 1;", "p->a[i].f = p->a[i].f;", "@y = 1;"}, true},
		{"declaration", []string{"@x = 1;", "static int y = 0;", "@z = 1;"}, false},
		{"comparison", []string{"@x = 1;", "y == 0;", "@z = 1;"}, false},
		{"directive between", []string{"@x = 1;", "y = y;", "#endif", "@z = 1;"}, false},
		{"label below", []string{"@x = 1;", "y = y;", "@out: z = 1;"}, false},
		{"loop below", []string{"@x = 1;", "y = y;", "@while( x ){"}, false},
		{"case below", []string{"@x = 1;", "y = y;", "@case 3:"}, false},
		{"switch above", []string{"@switch( x ){", "y = y;", "@z = 1;"}, false},
		{"two lines", []string{"@x = 1;", "y =", "@  y;"}, false},
		{"in a comment", []string{"@x = 1; /*", "y = y;", "*/ z = 1;"}, false},
	} {
		coded := map[int]bool{}
		src := make([]string, len(tc.src))
		for k, l := range tc.src {
			if strings.HasPrefix(l, "@") {
				coded[k+1] = true
				l = l[1:]
			}
			src[k] = l
		}
		comment := false
		texts := make([]string, len(src))
		for k := range src {
			texts[k] = strings.TrimSpace(codeText(src[k], &comment))
		}
		text := func(k int) string {
			if k < 1 || k > len(texts) {
				return ""
			}
			return texts[k-1]
		}
		if got := idleAssign(text, 2, 1, len(src), coded); got != tc.want {
			t.Errorf("%s: idleAssign(%q) = %v, want %v", tc.name, tc.src, got, tc.want)
		}
	}
}

// TestSwitchCases reads a switch's top-level labels: an empty case (no
// row to its break, or only the break's row at a nop the table points
// at), a case with code, a case inside #ifdef (no label of the switch's
// top level), and the closing brace.
func TestSwitchCases(t *testing.T) {
	src := []string{
		"switch( op ){", // 1
		"  case 0:",     // 2
		"    r = 1;",    // 3 @
		"    break;",    // 4 @
		"  case 1: {",   // 5
		"#ifdef X",      // 6
		"    r = 2;",    // 7
		"#endif",        // 8
		"    break;",    // 9
		"  }",           // 10
		"  case 2: {",   // 11
		"    break;",    // 12 @ at a nop
		"  }",           // 13
		"  case 3:",     // 14
		"    if( r ){",  // 15
		"      break;",  // 16
		"    }",         // 17
		"  default:",    // 18
		"    r = -1;",   // 19 @
		"}",             // 20
	}
	coded := map[int]bool{3: true, 4: true, 12: true, 19: true}
	cases, end := switchCases(src, 1, coded, map[int]bool{12: true})
	if end != 20 {
		t.Fatalf("closing brace at %d, want 20", end)
	}
	want := []switchCase{
		{label: 2, end: 5, brk: 4, coded: true},
		{label: 5, end: 11, brk: 9},
		{label: 11, end: 14, brk: 12},
		{label: 14, end: 18, brk: 16, coded: true},
		{label: 18, end: 20, isDefault: true, coded: true},
	}
	if len(cases) != len(want) {
		t.Fatalf("cases = %+v, want %+v", cases, want)
	}
	for k := range want {
		if cases[k] != want[k] {
			t.Errorf("case %d = %+v, want %+v", k, cases[k], want[k])
		}
	}
}

// TestCodelessFewLines: away from -O0 addCodeless visits only the lines
// codelessLines lists, and gives every function the rows a visit of
// every line gives: random sources of ifs, empty blocks, va_end, braces,
// preprocessor conditionals and statements, random rows among them, in C
// and C++.
func TestCodelessFewLines(t *testing.T) {
	vocab := []string{
		"if (p->x) {", "}", "} else {", "else {", "if (a[i]) { }", "if (a[i]) {}", "va_end(ap);",
		"#if FOO", "#ifdef BAR", "#endif", "#else", "x = 1;", "f();", "", "/* if (p->x) { */",
		"if (!b) {", "bool b = f();", "for (;;) {", "while (c) {", "return;", "if (p->x) y = 1;",
		"  if (q[1]) {   ", "/* a", "b */ if (p->y) {", "int v[2];", "if (q->z)", "{",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	defer func() { codelessEveryLine = false }()
	for round := 0; round < 400; round++ {
		n := 2 + rng.IntN(30)
		src := make([]string, n)
		for l := range src {
			src[l] = vocab[rng.IntN(len(vocab))]
		}
		var rs []fnRow
		for l := 1; l <= n; l++ {
			if l == 1 || rng.IntN(3) == 0 {
				rs = append(rs, fnRow{addr: uint64(0x10 + 4*len(rs)), ref: LineRef{"a.c", l}})
			}
		}
		source := func(string) ([]string, bool) { return src, true }
		for _, cpp := range []bool{false, true} {
			codelessEveryLine = true
			want := (&Model{}).addCodeless(slices.Clone(rs), source, false, cpp)
			codelessEveryLine = false
			got := (&Model{}).addCodeless(slices.Clone(rs), source, false, cpp)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d (C++ %v), lines %q, rows %v:\ngot  %v\nwant %v", round, cpp, src, rs, got, want)
			}
		}
	}
}
