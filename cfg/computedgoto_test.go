package cfg

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// cgotoSrc has the shapes of computed goto the graph is recovered for: a
// static table of label addresses (interp, funnelled into one jmp at -O0,
// one jmp per goto at -O2) and a label address kept in a variable (flip);
// and one it must refuse: GCC's relative idiom, whose table holds label
// differences the binary keeps no address of (rel).
const cgotoSrc = `
__attribute__((noipa)) long interp(const unsigned char *code)
{
	static void *tab[] = { &&op_inc, &&op_dbl, &&op_end, &&op_nop };
	long acc = 0;
	int pc = 0;
	goto *tab[code[pc++]];
op_inc:
	acc++;
	goto *tab[code[pc++]];
op_dbl:
	acc *= 2;
inner:
	acc += 3;
	goto *tab[code[pc++]];
op_nop:
	goto *tab[code[pc++]];
op_end:
	return acc;
}

__attribute__((noipa)) long flip(int n)
{
	void *next = &&a;
	long x = 0;
	int i = 0;
	goto *next;
a:
	x += 1;
	next = &&b;
	if (++i < n)
		goto *next;
	return x;
b:
	x += 10;
	next = &&a;
	if (++i < n)
		goto *next;
	return x;
}

__attribute__((noipa)) long rel(int i)
{
	static const int off[] = { &&r0 - &&r0, &&r1 - &&r0, &&r2 - &&r0 };
	goto *(&&r0 + off[i]);
r0:
	return 1;
r1:
	return 7;
r2:
	return 9;
}

int main(void)
{
	static const unsigned char prog[] = { 0, 1, 3, 0, 2 };
	return (int)(interp(prog) + flip(5) + rel(1)) & 1;
}
`

// TestComputedGoto builds cgotoSrc with gcc and checks the graphs: every
// label of interp's table is a block start and a successor of every
// computed goto and no target lies outside the function, flip's two labels are its jump's targets, and rel is refused.
func TestComputedGoto(t *testing.T) {
	gcc := mustHave(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "cgoto.c")
	if err := os.WriteFile(src, []byte(cgotoSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bld := range []struct {
		name  string
		flags []string
		flip  bool // flip keeps its frame (-O0): its goto *next is provable
	}{
		{"O0-pie", []string{"-O0", "-fpie", "-pie"}, true},
		{"O0-nopie", []string{"-O0", "-fno-pie", "-no-pie"}, true},
		{"O2-nopie", []string{"-O2", "-fno-pie", "-no-pie"}, true},
	} {
		t.Run(bld.name, func(t *testing.T) {
			exe := filepath.Join(dir, bld.name)
			run(t, dir, gcc, append(append([]string{}, bld.flags...), "-g", "-o", exe, src)...)
			b := openBinary(t, exe)
			labels := tableWords(t, exe, b.im, "tab.")
			if len(labels) != 4 {
				t.Fatalf("interp's table has %d words, want 4", len(labels))
			}
			g, fn := b.build(t, "interp")
			wantGotos(t, g, labels)
			for _, tb := range g.Tables {
				for _, a := range tb.Targets {
					if a < fn.Addr || a >= fn.Addr+fn.Size {
						t.Errorf("computed goto target %#x outside interp", a)
					}
				}
			}

			if bld.flip {
				g, _ = b.build(t, "flip")
				if len(g.Tables) == 0 {
					t.Fatalf("flip: no computed goto\n%v", g)
				}
				for _, tb := range g.Tables {
					if !tb.Computed || len(tb.Targets) < 2 {
						t.Errorf("flip: table %+v, want a computed goto with its two labels", tb)
					}
				}
			}

			for _, f := range b.st.Funcs {
				if f.Name != "rel" {
					continue
				}
				code, _ := b.st.Code(f.Addr, int(f.Size))
				_, err := Build(Options{Name: f.Name, Addr: f.Addr, Code: code, Image: b.im, CalleeName: b.names})
				if !errors.Is(err, ErrJumpTable) {
					t.Errorf("rel (label differences): %v, want %v", err, ErrJumpTable)
				}
			}

			// Without the data's pointers the table's labels are not
			// known: the function is refused, as before.
			fnCode, _ := b.st.Code(fn.Addr, int(fn.Size))
			_, err := Build(Options{Name: fn.Name, Addr: fn.Addr, Code: fnCode, Image: plainImage{b.im}, CalleeName: b.names})
			if !errors.Is(err, ErrJumpTable) {
				t.Errorf("interp without a PointerImage: %v, want %v", err, ErrJumpTable)
			}
		})
	}
}

// plainImage hides an image's CodePointers.
type plainImage struct{ im Image }

func (p plainImage) ReadImage(addr uint64, buf []byte) (int, error) { return p.im.ReadImage(addr, buf) }

// wantGotos checks that g has a computed goto, and that each one's
// successors are exactly the blocks starting at labels (and maybe other
// taken addresses), every label among them.
func wantGotos(t *testing.T, g *Graph, labels []uint64) {
	t.Helper()
	n := 0
	for i, bl := range g.Blocks {
		if bl.Term != TermTable {
			continue
		}
		n++
		var succ []uint64
		for _, e := range g.Succs(i) {
			if e.Kind != JumpTable || e.To < 0 {
				t.Errorf("block %#x: edge %+v of a computed goto", bl.Start, e)
			}
			succ = append(succ, e.Target)
		}
		for _, l := range labels {
			if !slices.Contains(succ, l) {
				t.Errorf("block %#x: label %#x is no successor of the computed goto (%#x)\n%v", bl.Start, l, succ, g)
			}
			if j, ok := g.BlockAt(l); !ok || g.Blocks[j].Start != l {
				t.Errorf("label %#x starts no block", l)
			}
		}
	}
	if n == 0 {
		t.Fatalf("%s: no computed goto\n%v", g.Name, g)
	}
	for _, tb := range g.Tables {
		if !tb.Computed {
			t.Errorf("%s: table %+v is not a computed goto", g.Name, tb)
		}
	}
}

// tableWords returns the 8-byte words of the data object whose symbol
// starts with prefix (gcc names a static local tab.0), read through im
// (relocations applied): the oracle of the labels a computed goto has.
func tableWords(t *testing.T, exe string, im *ELFImage, prefix string) []uint64 {
	t.Helper()
	ef, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	syms, err := ef.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_OBJECT || !strings.HasPrefix(s.Name, prefix) {
			continue
		}
		buf := make([]byte, s.Size)
		if _, err := im.ReadImage(s.Value, buf); err != nil {
			t.Fatal(err)
		}
		var out []uint64
		for i := 0; i+8 <= len(buf); i += 8 {
			out = append(out, binary.LittleEndian.Uint64(buf[i:]))
		}
		return out
	}
	t.Fatalf("%s: no symbol %s*", exe, prefix)
	return nil
}
