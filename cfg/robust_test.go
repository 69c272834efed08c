package cfg

import (
	"errors"
	"math/rand"
	"testing"
)

// checkGraph verifies the invariants every Graph must satisfy, whatever
// the input: blocks sorted, disjoint and inside the function, edges of a
// block contiguous and pointing at block starts, calls inside their
// blocks.
func checkGraph(t testing.TB, g *Graph, o Options) {
	t.Helper()
	if len(g.Blocks) == 0 || g.Blocks[0].Start != o.Addr {
		t.Fatalf("%x: first block does not start at the entry: %v", o.Code, g)
	}
	end := o.Addr + uint64(len(o.Code))
	for i, b := range g.Blocks {
		if b.Start >= b.End || b.End > end || b.Last < b.Start || b.Last >= b.End || b.Insts <= 0 {
			t.Fatalf("%x: bad block %d %+v", o.Code, i, b)
		}
		if i > 0 && g.Blocks[i-1].End > b.Start {
			t.Fatalf("%x: blocks %d and %d overlap", o.Code, i-1, i)
		}
		for _, e := range g.Succs(i) {
			if e.From != i {
				t.Fatalf("%x: edge %+v listed under block %d", o.Code, e, i)
			}
			if e.To == Outside {
				if e.Target >= o.Addr && e.Target < end {
					t.Fatalf("%x: edge %+v to Outside with an inside target", o.Code, e)
				}
				continue
			}
			if e.To < 0 || e.To >= len(g.Blocks) || g.Blocks[e.To].Start != e.Target {
				t.Fatalf("%x: edge %+v does not reach a block start", o.Code, e)
			}
		}
	}
	n := 0
	for i := range g.Blocks {
		n += len(g.Succs(i))
	}
	if n != len(g.Edges) {
		t.Fatalf("%x: %d edges listed under blocks, %d in Edges", o.Code, n, len(g.Edges))
	}
	for _, c := range g.Calls {
		if b := g.Blocks[c.Block]; c.Addr < b.Start || c.Addr >= b.End {
			t.Fatalf("%x: call %+v outside its block %+v", o.Code, c, b)
		}
	}
}

// buildChecked runs Build on code and checks its result: a valid graph or
// a *Error inside the function's bounds.
func buildChecked(t testing.TB, code []byte, im Image) {
	t.Helper()
	o := Options{Name: "f", Addr: 0x1000, Code: code, Image: im,
		CalleeName: func(a uint64) string { return corpusNames[a] }}
	g, err := Build(o)
	if err != nil {
		var ce *Error
		if !errors.As(err, &ce) {
			t.Fatalf("%x: error %v is not a *cfg.Error", code, err)
		}
		if g != nil {
			t.Fatalf("%x: both a graph and an error", code)
		}
		if ce.Addr < o.Addr || ce.Addr > o.Addr+uint64(len(code))+maxInstLen && !errors.Is(err, ErrJumpTable) {
			t.Fatalf("%x: error address %#x outside the function: %v", code, ce.Addr, err)
		}
		return
	}
	checkGraph(t, g, o)
}

// TestBadInput feeds truncated and garbage code; every one must give a
// *Error, never a panic or a wrong graph.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		code string
		want error
	}{
		{"empty", "", ErrEmpty},
		{"one prefix byte", "\x66", ErrTruncated},
		{"call cut off", "\xe8\x00\x00", ErrTruncated},
		{"jmp cut off", "\xe9\x00", ErrTruncated},
		{"jcc cut off", "\x0f\x84\x00\x00\x00", ErrTruncated},
		{"invalid opcode", "\x06", ErrUndecodable},
		{"invalid after prefix", "\x48\x06", ErrUndecodable},
		{"only a mov", "\x48\x89\xe5", ErrFallsOff},
		{"jcc last", "\x85\xff\x74\x00", ErrFallsOff},
		{"jmp into itself", "\xeb\xff", ErrMidInstruction},
		{"jmp back into the middle", "\xb8\xc3\x00\x00\x00\xeb\xfa", ErrMidInstruction},
		{"jmp over unreached bytes", "\xeb\x01\xb8\xc3", ErrData},
		{"fall into overlap", "\x74\x01\xb8\xc3\x00\x00\x00\xc3", ErrMidInstruction},
		{"data after ret", "\xc3\x01\x02\x03", ErrData},
		{"jmp reg via index", "\xff\x24\xc7", ErrJumpTable},
		{"far jmp", "\xff\x2f", ErrJumpTable},
		{"zeros", "\x00\x00\x00\x00", ErrFallsOff},
		{"int3 then padding is a trap", "\xcc\xcc\xcc", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Build(Options{Name: "f", Addr: 0x1000, Code: []byte(tt.code)})
			if !errors.Is(err, tt.want) || tt.want == nil && err != nil {
				t.Fatalf("Build(% x) = %v, %v; want %v", tt.code, g, err, tt.want)
			}
		})
	}
}

// TestTruncatedCorpus builds every prefix of every corpus case: each must
// be a valid graph or a *Error.
func TestTruncatedCorpus(t *testing.T) {
	cases, _ := readCorpus(t, "testdata/graphs.txt")
	for _, c := range cases {
		for n := 0; n <= len(c.code); n++ {
			buildChecked(t, c.code[:n], c.image)
		}
	}
}

// TestGarbage builds random bytes and corpus cases with random bytes
// flipped.
func TestGarbage(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	cases, _ := readCorpus(t, "testdata/graphs.txt")
	for i := 0; i < 2000; i++ {
		var code []byte
		var im Image
		if i%2 == 0 {
			code = make([]byte, rnd.Intn(64))
			rnd.Read(code)
		} else {
			c := cases[rnd.Intn(len(cases))]
			code = append([]byte(nil), c.code...)
			for k := 0; k < 1+rnd.Intn(3) && len(code) > 0; k++ {
				code[rnd.Intn(len(code))] = byte(rnd.Intn(256))
			}
			im = c.image
		}
		buildChecked(t, code, im)
	}
}

// FuzzBuild checks that Build never panics and returns either a valid
// graph or a *Error. Its seed corpus (the corpus cases) runs in go test.
func FuzzBuild(f *testing.F) {
	cases, _ := readCorpus(&testing.T{}, "testdata/graphs.txt")
	for _, c := range cases {
		f.Add(c.code)
	}
	im := &fakeImage{segs: map[uint64][]byte{}}
	if len(cases) > 0 {
		for _, c := range cases {
			for a, d := range c.image.segs {
				if a != c.addr {
					im.segs[a] = d
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, code []byte) {
		buildChecked(t, code, im)
	})
}
