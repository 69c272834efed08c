package linecount

import (
	"fmt"
	"testing"
)

// The graphs below are GCC -O0 shapes written out by hand, with counts
// known by construction; the wanted line counts are gcov's on them.

// forLoop is `for (i = 0; i < n; i++) body;` with n = 10 on lines 0 (for)
// and 1 (body): init block, body block (body, then the increment on line
// 0), test block.
func forLoop(n uint64) Func {
	return Func{
		Blocks: []Block{
			{Lines: []int32{0}, Count: 1},     // 0: i = 0; jmp test
			{Lines: []int32{1, 0}, Count: n},  // 1: body; i++
			{Lines: []int32{0}, Count: n + 1}, // 2: test
			{Lines: []int32{2}, Count: 1},     // 3: after
		},
		Arcs: []Arc{
			{Outside, 0, 1},
			{0, 2, 1},
			{1, 2, n},
			{2, 1, n},
			{2, 3, 1},
		},
	}
}

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		funcs []Func
		n     int
		want  []uint64
	}{
		{"for loop", []Func{forLoop(10)}, 3, []uint64{11, 10, 1}},
		{"for loop run twice", []Func{forLoop(10), forLoop(5)}, 3, []uint64{11 + 6, 15, 2}},
		{
			// for (;;) { s += i; if (++i > 5) break; } on lines 0 (s +=
			// i) and 1 (the if): one block on both lines that loops to
			// itself (its closing jmp folded into the edge).
			"for ever with break",
			[]Func{{
				Blocks: []Block{{Lines: []int32{2}, Count: 1}, {Lines: []int32{0, 1}, Count: 6}, {Lines: []int32{3}, Count: 1}},
				Arcs:   []Arc{{Outside, 0, 1}, {0, 1, 1}, {1, 1, 5}, {1, 2, 1}},
			}},
			4, []uint64{6, 6, 1, 1},
		},
		{
			// while (1) { s += get(n); n = n->next; } where get exits on
			// its fourth call: the call block (line 0) and the block
			// after the call (lines 0 and 1, listed under 1).
			"while 1 ended in a callee",
			[]Func{{
				Blocks: []Block{{Lines: []int32{2}, Count: 1}, {Lines: []int32{0}, Count: 4}, {Lines: []int32{0, 1}, Count: 3}},
				Arcs:   []Arc{{Outside, 0, 1}, {0, 1, 1}, {1, 2, 3}, {2, 1, 3}},
			}},
			3, []uint64{4, 3, 1},
		},
		{
			// A one-line nested loop: for (i...) for (j...) s++; all on
			// line 0, 3 x 4 iterations.
			"nested one-line loops",
			[]Func{{
				Blocks: []Block{
					{Lines: []int32{0}, Count: 1},  // 0: i = 0
					{Lines: []int32{0}, Count: 3},  // 1: j = 0
					{Lines: []int32{0}, Count: 12}, // 2: s++, j++
					{Lines: []int32{0}, Count: 15}, // 3: j test
					{Lines: []int32{0}, Count: 3},  // 4: i++
					{Lines: []int32{0}, Count: 4},  // 5: i test
					{Lines: []int32{1}, Count: 1},  // 6: after
				},
				Arcs: []Arc{{Outside, 0, 1}, {0, 5, 1}, {1, 3, 3}, {2, 3, 12}, {3, 2, 12}, {3, 4, 3}, {4, 5, 3}, {5, 1, 3}, {5, 6, 1}},
			}},
			2, []uint64{1 + 12 + 3, 1},
		},
		{
			// A line that is only the head of a block listed under
			// another keeps the block's count; a never-run block marks
			// its lines.
			"mentioned only",
			[]Func{{
				Blocks: []Block{{Lines: []int32{0, 1}, Count: 7}, {Lines: []int32{2}, Count: 0}},
				Arcs:   []Arc{{Outside, 0, 7}, {0, 1, 0}},
			}},
			4, []uint64{7, 7, 0, 0},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Lines(tc.funcs, tc.n)
			if fmt.Sprint(got.Counts) != fmt.Sprint(tc.want) {
				t.Errorf("Lines = %v, want %v", got.Counts, tc.want)
			}
		})
	}
}

func TestExistsAndUnexecuted(t *testing.T) {
	r := Lines([]Func{{
		Blocks: []Block{{Lines: []int32{0, 1}, Count: 7}, {Lines: []int32{1}, Count: 0}},
		Arcs:   []Arc{{Outside, 0, 7}, {0, 1, 0}},
	}}, 3)
	if fmt.Sprint(r.Exists) != "[true true false]" || fmt.Sprint(r.Unexecuted) != "[false true false]" {
		t.Errorf("Exists %v, Unexecuted %v", r.Exists, r.Unexecuted)
	}
}

// TestBadInput: arcs and lines out of range are ignored, never a panic.
func TestBadInput(t *testing.T) {
	Lines([]Func{{
		Blocks: []Block{{Lines: []int32{-3, 9}, Count: 1}},
		Arcs:   []Arc{{5, 0, 1}, {0, 7, 1}, {-9, 0, 2}},
	}}, 2)
}
