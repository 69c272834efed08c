package cfg

import (
	"reflect"
	"testing"
)

func TestCheckFlow(t *testing.T) {
	// loop: b0 -f-> b1; b1 -t-> b1 (the loop), b1 -f-> b2 (return).
	g, err := Build(Options{Name: "loop", Addr: 0x1000, Code: []byte{
		0x31, 0xc0, // xor %eax,%eax
		0x01, 0xf8, // 1: add %edi,%eax
		0xff, 0xcf, // dec %edi
		0x75, 0xfa, // jnz 1b
		0xc3, // ret
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.String(); got != "1000-1002/1:fall>f1 1002-1008/3:cond>t1,f2 1008-1009/1:return" {
		t.Fatalf("graph %s", got)
	}
	// Entered 3 times, 10 trips round the loop in all.
	tests := []struct {
		name    string
		blocks  []uint64
		edges   []uint64 // b0->b1, b1->b1, b1->b2
		entries uint64
		want    []FlowError
	}{
		{"conserved", []uint64{3, 10, 3}, []uint64{3, 7, 3}, 3, nil},
		{"never ran", []uint64{0, 0, 0}, []uint64{0, 0, 0}, 0, nil},
		{"block counted once too often", []uint64{3, 11, 3}, []uint64{3, 7, 3}, 3, []FlowError{{Block: 1, Count: 11, In: 10}}},
		{"entry not counted", []uint64{3, 10, 3}, []uint64{3, 7, 3}, 2, []FlowError{{Block: 0, Count: 3, In: 2}}},
		{"exit edge lost", []uint64{3, 10, 3}, []uint64{3, 7, 2}, 3, []FlowError{{Block: 2, Count: 3, In: 2}}},
		{"short counts", []uint64{3, 10}, []uint64{3, 7, 3}, 3, []FlowError{{0, 3, 3}, {1, 10, 10}, {2, 0, 3}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckFlow(g, tt.blocks, tt.edges, tt.entries); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("CheckFlow = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestGraphLookups(t *testing.T) {
	cases, _ := readCorpus(t, "testdata/graphs.txt")
	for _, c := range cases {
		g, err := buildCase(&c)
		if err != nil {
			continue
		}
		for i, b := range g.Blocks {
			for _, a := range []uint64{b.Start, b.Last, b.End - 1} {
				if j, ok := g.BlockAt(a); !ok || j != i {
					t.Errorf("%s: BlockAt(%#x) = %d, %v; want %d", c.name, a, j, ok, i)
				}
			}
			for k, e := range g.Succs(i) {
				if e.To == Outside {
					continue
				}
				if j, ok := g.EdgeIndex(i, e.To); !ok || j != g.SuccIndex(i)+k {
					t.Errorf("%s: EdgeIndex(%d, %d) = %d, %v; want %d", c.name, i, e.To, j, ok, g.SuccIndex(i)+k)
				}
			}
		}
		if _, ok := g.BlockAt(g.Addr - 1); ok {
			t.Errorf("%s: BlockAt before the entry found a block", c.name)
		}
		if _, ok := g.EdgeIndex(0, -1); ok {
			t.Errorf("%s: EdgeIndex to Outside found an edge", c.name)
		}
	}
}

func TestDefaultNoReturn(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"exit", true}, {"exit@GLIBC_2.2.5", true}, {"abort@plt", true},
		{"__stack_chk_fail", true}, {"runtime.throw", true}, {"runtime.gopanic", true},
		{"runtime.panicBounds", true}, {"runtime.throw.abi0", true},
		{"runtime.morestack_noctxt.abi0", false}, {"runtime.morestack", false},
		{"os.Exit", false}, {"puts", false}, {"", false},
	}
	for _, tt := range tests {
		if got := DefaultNoReturn(tt.name); got != tt.want {
			t.Errorf("DefaultNoReturn(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
