package symtab

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// realBinaries are whole programs and libraries to hold instLen to x86asm:
// a static C program (glibc's IFUNC string functions in AVX2, EVEX and
// AVX-512 forms), the C and C++ libraries, and a Go binary.
func realBinaries(t *testing.T) []string {
	t.Helper()
	var paths []string
	if gofmt, err := exec.LookPath("gofmt"); err == nil {
		paths = append(paths, gofmt) // a Go binary: Go's own assembly too
	}
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib/x86_64-linux-gnu/libm.so.6"} {
		if _, err := os.Stat(p); err == nil {
			paths = append(paths, p)
		}
	}
	if _, err := exec.LookPath("gcc"); err == nil {
		if _, err := os.Stat("/usr/lib/x86_64-linux-gnu/libc.a"); err == nil {
			paths = append(paths, buildC(t, "#include <stdio.h>\n#include <string.h>\nint main(int c, char **v){char b[64]; memcpy(b, v[0], 8); printf(\"%s %d\\n\", v[0], c); puts(b); return 0;}\n", "-static", "-O2"))
		}
	}
	return paths
}

// TestInstLenMatchesX86asm decodes every function of real binaries
// linearly with x86asm and requires instLen, wherever it answers, to give
// the same length and the same branch target.
func TestInstLenMatchesX86asm(t *testing.T) {
	for _, path := range realBinaries(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			insts, known, bad := 0, 0, 0
			for _, fn := range f.Funcs {
				code, ok := f.Code(fn.Addr, int(fn.Size))
				if !ok {
					continue
				}
				for off := 0; off < len(code); {
					inst, err := DecodeInst(code[off:])
					if err != nil {
						off++
						continue
					}
					insts++
					n, rel, isRel, ok := instLen(code[off:])
					if ok {
						known++
						xrel, xIsRel := inst.Args[0].(x86asm.Rel)
						if inst.Op == x86asm.XBEGIN {
							xrel, xIsRel = inst.Args[0].(x86asm.Rel)
						}
						if n != inst.Len || isRel != xIsRel || (isRel && rel != int64(xrel)) {
							bad++
							if bad <= 10 {
								t.Errorf("%s+%#x: % x: instLen %d (rel %v %d), x86asm %v len %d", fn.Name, off, code[off:off+inst.Len], n, isRel, rel, inst, inst.Len)
							}
						}
					}
					off += inst.Len
				}
			}
			t.Logf("%d instructions, %d decoded by instLen, %d differ", insts, known, bad)
			if insts > 1000 && known < insts*95/100 {
				t.Errorf("instLen knows %d of %d instructions: the fast path is not taken", known, insts)
			}
		})
	}
}

// TestTargetsMidFunction: a jump into the middle of another function (as
// glibc's __mempcpy_* jump one instruction into __memcpy_*), a local label
// only an indirect jump reaches through a table in data, and every symbol
// are targets; an address inside an instruction sequence nothing jumps to
// is not.
func TestTargetsMidFunction(t *testing.T) {
	mustHaveCC(t)
	dir := t.TempDir()
	// glibc's shape, as the integration tests run it under every engine.
	src := filepath.Join("..", "integration", "testdata", "static", "midjump.s")
	for _, pie := range []string{"-no-pie", "-pie"} {
		t.Run(pie, func(t *testing.T) {
			exe := filepath.Join(dir, "t"+pie)
			if out, err := exec.Command("gcc", pie, "-o", exe, src).CombinedOutput(); err != nil {
				t.Fatalf("gcc: %v\n%s", err, out)
			}
			f, err := Open(exe)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			f1, f3 := funcByName(t, f, "f1"), funcByName(t, f, "f3")
			tg := f.Targets()
			for _, c := range []struct {
				name string
				addr uint64
				want bool
			}{
				{"f1", f1.Addr, true},
				{"f1's .Lstart (jumped to from f2)", f1.Addr + 3, true},
				{"f1's second add (fall-through only)", f1.Addr + 7, false},
				{"f3's .Lviadata (in a table in data)", f3.Addr + 12, true},
				{"f3's nop (after its indirect jump)", f3.Addr + 11, false},
			} {
				if got := tg.Has(c.addr); got != c.want {
					t.Errorf("Has(%s at %#x) = %v, want %v", c.name, c.addr, got, c.want)
				}
			}
			if !tg.Within(f1.Addr, f1.Addr+5) {
				t.Errorf("Within(f1, f1+5) = false: a 5-byte patch at f1 covers .Lstart")
			}
			if tg.Within(f1.Addr+3, f1.Addr+7) {
				t.Errorf("Within(f1+3, f1+7) = true, want false")
			}
		})
	}
}
