package cfg

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalleeRegs builds testdata/calleeregs.c with gcc -O2 as a PIE:
// unescape's switch, in a loop, has its table's base in a caller-saved
// register that the call to the static hex in one case leaves alone
// (gcc's -fipa-ra). Its graph is recovered only when a direct call
// clobbers what its callee writes (Options.CalleeWrites), and then its
// table is objdump's. The helpers' register sets are what their code
// writes: hex leaves the base's register, clobber writes %r10 and %r11
// in assembly, a recursion and an indirect call write everything.
func TestCalleeRegs(t *testing.T) {
	gcc := mustHave(t, "gcc")
	src, err := filepath.Abs("testdata/calleeregs.c")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	exe := filepath.Join(dir, "calleeregs")
	run(t, dir, gcc, "-O2", "-fpie", "-pie", "-g", "-o", exe, src)
	b := openBinary(t, exe)
	cr := NewCalleeRegs(b.st)
	entry := map[string]uint64{}
	for _, fn := range b.st.Funcs {
		entry[fn.Name] = fn.Addr
	}
	for _, name := range []string{"hex", "clobber", "walk", "indirect", "unescape"} {
		if entry[name] == 0 {
			t.Fatalf("no function %s in %s", name, exe)
		}
	}
	r10, r11 := RegSet(1)<<10, RegSet(1)<<11
	if w := cr.Writes(entry["clobber"]); w&r10 == 0 || w&r11 == 0 {
		t.Errorf("clobber writes %016b: want %%r10 and %%r11 among them", w)
	}
	for _, name := range []string{"walk", "indirect"} {
		if w := cr.Writes(entry[name]); w != AllRegs {
			t.Errorf("%s writes %016b: want every register", name, w)
		}
	}
	if w := cr.Writes(entry["unescape"] + 1); w != AllRegs {
		t.Errorf("an address inside unescape writes %016b: want every register", w)
	}

	insts := objdumpFunc(t, exe, "unescape")
	jump, base, n, lea := objdumpTable(t, insts)
	reg := ""
	for _, in := range insts {
		if in.addr == lea {
			reg = in.text[strings.LastIndexByte(in.text, ',')+1:]
			reg = strings.Fields(reg)[0]
		}
	}
	fam := map[string]int{"%rax": 0, "%rcx": 1, "%rdx": 2, "%rsi": 6, "%rdi": 7, "%r8": 8, "%r9": 9, "%r10": 10, "%r11": 11}
	f, callerSaved := fam[reg]
	if !callerSaved {
		t.Skipf("gcc keeps unescape's table base in %s, saved by any callee: not the shape under test", reg)
	}
	if w := cr.Writes(entry["hex"]); w&(1<<f) != 0 {
		t.Fatalf("hex writes %016b, the table base's %s among them: not the shape under test", w, reg)
	}
	fn := b.st.Funcs[0]
	for _, x := range b.st.Funcs {
		if x.Name == "unescape" {
			fn = x
		}
	}
	code, _ := b.st.Code(fn.Addr, int(fn.Size))
	o := Options{Name: fn.Name, Addr: fn.Addr, Code: code, Image: b.im, CalleeName: b.names, SplitCalls: true}
	if _, err := Build(o); !errors.Is(err, ErrJumpTable) {
		t.Errorf("unescape without the callees' registers: %v, want %v", err, ErrJumpTable)
	}
	o.CalleeWrites = cr.Writes
	g, err := Build(o)
	if err != nil {
		t.Fatalf("unescape with the callees' registers: %v", err)
	}
	checkAgainstObjdump(t, exe, g, fn)
	checkTable(t, g, jump, base, elfTable(t, exe, base, n))
}
