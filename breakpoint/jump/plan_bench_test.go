package jump

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/patchprof/patchprof/symtab"
)

// BenchmarkPlanEntries plans a jump patch at the entry of every function of
// a static -O2 build of movedSource (the C library's code beside it), as a
// plan does for each site: what each costs, and what it allocates, which
// on a program of SQLite's size is tens of thousands of times a run.
func BenchmarkPlanEntries(b *testing.B) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		b.Skipf("gcc not found in PATH: %v", err)
	}
	dir := b.TempDir()
	src, exe := filepath.Join(dir, "moved.c"), filepath.Join(dir, "moved")
	if err := os.WriteFile(src, []byte(movedSource), 0o644); err != nil {
		b.Fatal(err)
	}
	if out, err := exec.Command(gcc, "-g", "-O2", "-static", "-o", exe, src).CombinedOutput(); err != nil {
		b.Skipf("gcc -static: %v\n%s", err, out)
	}
	sym, err := symtab.Open(exe)
	if err != nil {
		b.Fatal(err)
	}
	defer sym.Close()
	type entry struct {
		code []byte
		addr uint64
	}
	var es []entry
	for _, f := range sym.Funcs {
		if code, ok := sym.Code(f.Addr, int(f.Size)); ok && f.Size >= JmpLen {
			es = append(es, entry{code, f.Addr})
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e := es[i%len(es)]
		Plan(e.code, e.addr, Options{End: e.addr + uint64(len(e.code)), Func: e.code, FuncAddr: e.addr})
	}
}
