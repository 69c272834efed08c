package breakpoint

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/patchprof/patchprof/breakpoint/jump"
	"github.com/patchprof/patchprof/breakpoint/relocate"
)

// tinySource has the -O2 shapes of TinyXML-2's XMLNode::ToElement and the
// like: whole functions of 3 and 4 bytes, called through a pointer, each
// followed by gcc's alignment padding.
const tinySource = `typedef long (*fn)(long);
__attribute__((noinline)) long zero(long x) { (void)x; return 0; }
__attribute__((noinline)) long id(long x) { return x; }
__attribute__((noinline)) long twice(long x) { return 2 * x + zero(x); }
volatile fn table[2] = {zero, id};
int main(int argc, char **argv) { (void)argv; return (int)(table[argc & 1](argc) + twice(argc)); }
`

// TestPlanPadding: a function shorter than a jmp rel32 (zero: xor; ret,
// id: mov; ret) takes a 5-byte patch over itself and the first bytes of
// the padding after it, which must be the file's when it is patched; its
// trampoline counts, runs the function and none of the padding.
func TestPlanPadding(t *testing.T) {
	sym, lt := buildSource(t, "tiny.c", tinySource, "-O2")
	for _, po := range []PlanOptions{{Funcs: true}, {Lines: true, Funcs: true}} {
		what := map[bool]string{false: "--funcs", true: "--lines --funcs"}[po.Lines]
		p := NewPlan(sym, lt, po)
		jp := p.PlanJumps(sym, po)
		tab := p.Table
		if jp.Padded < 2 {
			t.Errorf("%s: %d sites cover padding, want zero's and id's at least (plan %+v)", what, jp.Padded, jp)
		}
		for _, f := range sym.Funcs {
			if f.Name != "zero" && f.Name != "id" {
				continue
			}
			i, ok := tab.Index(f.Addr)
			if !ok {
				t.Fatalf("%s: no site at %s", what, f.Name)
			}
			if r := tab.KeptReason(i); r != "" || tab.JumpLen(i) != jump.JmpLen {
				t.Fatalf("%s: %s (%d bytes) keeps its breakpoint (%q), jump length %d", what, f.Name, f.Size, r, tab.JumpLen(i))
			}
			pad := tab.PaddingBytes(i)
			code, _ := sym.Code(f.Addr, 32)
			if len(pad) != jump.JmpLen-int(f.Size) || !bytes.Equal(pad, code[f.Size:jump.JmpLen]) {
				t.Fatalf("%s: %s's padding % x, code % x", what, f.Name, pad, code)
			}
			tr, err := tab.BuildTrampoline(i, code, 0x7f0000, 8, nil)
			if err != nil {
				t.Fatalf("%s: %s's trampoline: %v", what, f.Name, err)
			}
			body := tr.Code[len(tr.Code)-int(f.Size):]
			if !bytes.Equal(body, code[:f.Size]) || len(tr.Patch) != jump.JmpLen || tr.Patch[0] != 0xE9 || !bytes.Equal(tr.Orig, code[:jump.JmpLen]) {
				t.Errorf("%s: %s: trampoline % x, patch % x, original % x; want the function's % x run whole", what, f.Name, tr.Code, tr.Patch, tr.Orig, code[:f.Size])
			}
			if got := tr.Relocated(); len(got) == 0 || got[len(got)-1] >= f.Addr+f.Size {
				t.Errorf("%s: %s: the trampoline runs %#x, past the function's end %#x", what, f.Name, got, f.Addr+f.Size)
			}
			// Padding the program wrote over is not the file's.
			changed := bytes.Clone(code)
			changed[f.Size] ^= 0xff
			var re *relocate.Error
			if _, err := tab.BuildTrampoline(i, changed, 0x7f0000, 8, nil); !errors.As(err, &re) || re.Reason != ReasonPaddingChanged {
				t.Errorf("%s: %s with its padding changed: %v, want %q", what, f.Name, err, ReasonPaddingChanged)
			}
		}
	}
}

// TestIsPadding: the padding forms gcc, clang and gas emit between
// functions, and bytes that are code.
func TestIsPadding(t *testing.T) {
	for _, c := range []struct {
		hex  string
		want bool
	}{
		{"90", true},
		{"cccccc", true},
		{"000000", true},
		{"6690", true},
		{"0f1f00", true},
		{"0f1f4000", true},
		{"0f1f440000", true},
		{"660f1f440000", true},
		{"0f1f8000000000", true},
		{"0f1f840000000000", true},
		{"660f1f840000000000", true},
		{"66662e0f1f8400000000006690", true},
		{"662e0f1f840000000000", true},
		{"c3", false},
		{"31c0", false},
		{"0f1f48", false},   // truncated
		{"0f1f4800", false}, // nopl 0(%rax) is 0f 1f 40; /1 is not a nop
		{"90c3", false},
		{"eb00", false},
	} {
		b, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatal(err)
		}
		if got := IsPadding(b); got != c.want {
			t.Errorf("IsPadding(% x) = %v, want %v", b, got, c.want)
		}
	}
}

// paddingCases are tiny functions in assembly, each followed by what the
// padding check must tell apart: ok1 and after1 (a lone ret) by nops,
// data1 by bytes that are not padding, label1 by a symbol in its padding,
// target1 by an address another function jumps to, short1 by fewer
// bytes than the jump needs before the next function.
const paddingCases = `__asm__(
	".text\n"
	".p2align 4\n"
	".globl ok1\n.type ok1,@function\nok1:\n xor %eax,%eax\n ret\n.size ok1,.-ok1\n"
	".p2align 4\n"
	".globl data1\n.type data1,@function\ndata1:\n xor %eax,%eax\n ret\n.size data1,.-data1\n"
	".byte 1,2,3,4,5,6\n"
	".p2align 4\n"
	".globl label1\n.type label1,@function\nlabel1:\n xor %eax,%eax\n ret\n.size label1,.-label1\n"
	"label1_pad:\n nop\n nop\n nop\n nop\n nop\n nop\n"
	".p2align 4\n"
	".globl target1\n.type target1,@function\ntarget1:\n xor %eax,%eax\n ret\n.size target1,.-target1\n"
	" nop\n nop\n.Ltarget1_pad:\n nop\n nop\n nop\n nop\n"
	".p2align 4\n"
	".globl short1\n.type short1,@function\nshort1:\n xor %eax,%eax\n ret\n.size short1,.-short1\n"
	" nop\n"
	".globl after1\n.type after1,@function\nafter1:\n ret\n.size after1,.-after1\n"
	".p2align 4\n"
	".globl jumper\n.type jumper,@function\njumper:\n test %edi,%edi\n je .Ltarget1_pad\n xor %eax,%eax\n ret\n.size jumper,.-jumper\n"
);
int main(void) { return 0; }
`

// TestPlanPaddingRefused: only padding nothing reaches is covered.
func TestPlanPaddingRefused(t *testing.T) {
	sym, lt := buildSource(t, "cases.c", paddingCases, "-O2")
	po := PlanOptions{Funcs: true}
	p := NewPlan(sym, lt, po)
	p.PlanJumps(sym, po)
	tab := p.Table
	for name, covered := range map[string]bool{"ok1": true, "after1": true, "data1": false, "label1": false, "target1": false, "short1": false} {
		var addr uint64
		for _, f := range sym.Funcs {
			if f.Name == name {
				addr = f.Addr
			}
		}
		i, ok := tab.Index(addr)
		if addr == 0 || !ok {
			t.Fatalf("no site at %s", name)
		}
		if got := tab.PaddingBytes(i) != nil; got != covered {
			t.Errorf("%s: patch covers its padding %v, want %v (kept: %q)", name, got, covered, tab.KeptReason(i))
		}
		if !covered && tab.KeptReason(i) != jump.ReasonTransfer {
			t.Errorf("%s keeps its breakpoint for %q, want %q", name, tab.KeptReason(i), jump.ReasonTransfer)
		}
	}
}
