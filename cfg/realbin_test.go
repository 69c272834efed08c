package cfg

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/arch/x86/x86asm"

	"github.com/patchprof/patchprof/symtab"
)

func mustHave(t testing.TB, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Skipf("%s not found in PATH: %v", tool, err)
	}
	return p
}

// run runs a build command, showing its output on failure.
func run(t testing.TB, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// An executable is an opened executable with everything Build needs.
type executable struct {
	path  string
	st    *symtab.File
	im    *ELFImage
	names func(uint64) string
}

func openBinary(t testing.TB, path string) *executable {
	t.Helper()
	st, err := symtab.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	im, err := NewELFImage(f)
	if err != nil {
		t.Fatal(err)
	}
	return &executable{path: path, st: st, im: im, names: CalleeNames(st, im)}
}

func (b *executable) build(t testing.TB, name string) (*Graph, symtab.Func) {
	t.Helper()
	for _, fn := range b.st.Funcs {
		if fn.Name != name {
			continue
		}
		code, ok := b.st.Code(fn.Addr, int(fn.Size))
		if !ok {
			t.Fatalf("%s: no code for %s", b.path, name)
		}
		o := Options{Name: fn.Name, Addr: fn.Addr, Code: code, Image: b.im, CalleeName: b.names}
		g, err := Build(o)
		if err != nil {
			t.Fatalf("%s: %v", b.path, err)
		}
		checkGraph(t, g, o)
		return g, fn
	}
	t.Fatalf("%s: no function %s", b.path, name)
	return nil, symtab.Func{}
}

// objdumpBranches disassembles [fn.Addr, fn.Addr+fn.Size) with objdump,
// the independent oracle, and returns the addresses of its conditional
// branches and the targets of its direct jumps and branches.
func objdumpBranches(t testing.TB, path string, fn symtab.Func) (conds []uint64, targets []uint64) {
	t.Helper()
	objdump := mustHave(t, "objdump")
	out, err := exec.Command(objdump, "-d", "--no-show-raw-insn",
		"--start-address="+strconv.FormatUint(fn.Addr, 10),
		"--stop-address="+strconv.FormatUint(fn.Addr+fn.Size, 10), path).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump: %v\n%s", err, out)
	}
	// "  401237:\tjbe    401250 <act+0x20>"
	re := regexp.MustCompile(`^\s*([0-9a-f]+):\s+(?:(?:bnd|notrack)\s+)?(j[a-z]+|loop[a-z]*)\s+([0-9a-f]+) <`)
	for _, line := range strings.Split(string(out), "\n") {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		addr, _ := strconv.ParseUint(m[1], 16, 64)
		target, _ := strconv.ParseUint(m[3], 16, 64)
		if m[2] != "jmp" {
			conds = append(conds, addr)
		}
		if target >= fn.Addr && target < fn.Addr+fn.Size {
			targets = append(targets, target)
		}
	}
	return conds, targets
}

// checkAgainstObjdump checks a graph's conditional branches and block
// starts against objdump's disassembly.
func checkAgainstObjdump(t *testing.T, path string, g *Graph, fn symtab.Func) {
	t.Helper()
	conds, targets := objdumpBranches(t, path, fn)
	if got := g.CondBranches(); got != len(conds) {
		t.Errorf("%s: %d conditional branches, objdump shows %d (%x)\n%v", fn.Name, got, len(conds), conds, g)
	}
	for _, c := range conds {
		i, ok := g.BlockAt(c)
		if !ok || g.Blocks[i].Last != c || g.Blocks[i].Term != TermCond {
			t.Errorf("%s: objdump's branch at %#x does not end a TermCond block\n%v", fn.Name, c, g)
		}
	}
	for _, target := range targets {
		if i, ok := g.BlockAt(target); !ok || g.Blocks[i].Start != target {
			t.Errorf("%s: branch target %#x does not start a block\n%v", fn.Name, target, g)
		}
	}
}

func TestGCC(t *testing.T) {
	gcc := mustHave(t, "gcc")
	src, err := filepath.Abs("testdata/switch.c")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	builds := []struct {
		name  string
		flags []string
	}{
		{"O0-pie", []string{"-O0", "-fpie", "-pie"}},
		{"O2-pie", []string{"-O2", "-fpie", "-pie"}},
		{"O0-nopie", []string{"-O0", "-fno-pie", "-no-pie"}},
		{"O2-nopie", []string{"-O2", "-fno-pie", "-no-pie"}},
		{"O2-nopie-cet", []string{"-O2", "-fno-pie", "-no-pie", "-fcf-protection=full"}},
		{"O2-pie-cet", []string{"-O2", "-fpie", "-pie", "-fcf-protection=full"}},
	}
	for _, bld := range builds {
		t.Run(bld.name, func(t *testing.T) {
			exe := filepath.Join(dir, bld.name)
			run(t, dir, gcc, append(append([]string{}, bld.flags...), "-g", "-o", exe, src)...)
			b := openBinary(t, exe)

			// act: one jump table; every case (and the default) is a block
			// entered by a jump-table edge.
			g, fn := b.build(t, "act")
			checkAgainstObjdump(t, exe, g, fn)
			if len(g.Tables) != 1 {
				t.Fatalf("act: %d jump tables, want 1\n%v", len(g.Tables), g)
			}
			cases := map[int]bool{}
			for _, e := range g.Edges {
				if e.Kind == JumpTable {
					if e.To == Outside {
						t.Errorf("act: jump-table edge leaves the function: %+v", e)
					}
					cases[e.To] = true
				}
			}
			if len(cases) != 8 {
				t.Errorf("act: jump-table edges reach %d blocks, want 8 (7 cases and the default)\n%v", len(cases), g)
			}
			nputs := 0
			for _, c := range g.Calls {
				if c.Name == "puts" {
					nputs++
				}
			}
			for _, e := range g.Edges {
				if e.Kind == Taken && e.To == Outside && b.names(e.Target) == "puts" {
					nputs++ // -O2 makes the calls tail jumps
				}
			}
			if nputs != 8 {
				t.Errorf("act: %d calls of puts, want 8\n%v", nputs, g)
			}

			// sum: a loop with an if/else.
			g, fn = b.build(t, "sum")
			checkAgainstObjdump(t, exe, g, fn)
			back := false
			for _, e := range g.Edges {
				if e.To != Outside && g.Blocks[e.To].Start <= g.Blocks[e.From].Start {
					back = true
				}
			}
			if !back {
				t.Errorf("sum: no back edge in a loop\n%v", g)
			}

			// check: exit and abort end their blocks.
			g, fn = b.build(t, "check")
			checkAgainstObjdump(t, exe, g, fn)
			for _, name := range []string{"exit", "abort"} {
				found := false
				for _, c := range g.Calls {
					if c.Name == name {
						found = true
						if !c.NoReturn || g.Blocks[c.Block].Term != TermNoReturn || g.Blocks[c.Block].Last != c.Addr {
							t.Errorf("check: call of %s at %#x does not end its block as a noreturn call\n%v", name, c.Addr, g)
						}
					}
				}
				if !found && name == "exit" {
					t.Errorf("check: no call of %s\n%v", name, g)
				}
			}

			g, fn = b.build(t, "main")
			checkAgainstObjdump(t, exe, g, fn)
		})
	}
}

func TestGo(t *testing.T) {
	goTool := mustHave(t, "go")
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/goswitch/main.go")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module goswitch\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"exe", "pie"} {
		t.Run(mode, func(t *testing.T) {
			exe := filepath.Join(dir, "goswitch-"+mode)
			run(t, dir, goTool, "build", "-buildmode="+mode, "-o", exe, ".")
			b := openBinary(t, exe)
			g, fn := b.build(t, "main.pick")
			checkAgainstObjdump(t, exe, g, fn)
			if len(g.Tables) != 1 {
				t.Fatalf("main.pick: %d jump tables, want 1\n%v", len(g.Tables), g)
			}
			if n := len(g.Tables[0].Targets); n != 9 {
				t.Errorf("main.pick: table of %d entries, want 9 (cases 0 to 8)", n)
			}
			cases := map[int]bool{}
			for _, e := range g.Edges {
				if e.Kind == JumpTable {
					cases[e.To] = true
				}
			}
			if len(cases) != 9 {
				t.Errorf("main.pick: jump-table edges reach %d blocks, want 9\n%v", len(cases), g)
			}
			g, fn = b.build(t, "main.main")
			checkAgainstObjdump(t, exe, g, fn)

			// Every function of package main and of the runtime's Go
			// code is recoverable; only assembly and cgo may not be.
			for _, fn := range b.st.Funcs {
				if !strings.HasPrefix(fn.Name, "main.") {
					continue
				}
				code, _ := b.st.Code(fn.Addr, int(fn.Size))
				if _, err := Build(Options{Name: fn.Name, Addr: fn.Addr, Code: code, Image: b.im, CalleeName: b.names}); err != nil {
					t.Errorf("%v", err)
				}
			}
		})
	}
}

// TestELFImagePLT checks PLT names and image reads on a gcc binary.
func TestELFImagePLT(t *testing.T) {
	gcc := mustHave(t, "gcc")
	src, _ := filepath.Abs("testdata/switch.c")
	dir := t.TempDir()
	for _, flags := range [][]string{{"-fpie", "-pie"}, {"-fpie", "-pie", "-Wl,-z,now", "-fcf-protection=full"}, {"-fno-pie", "-no-pie"}} {
		exe := filepath.Join(dir, "a.out")
		run(t, dir, gcc, append(flags, "-O2", "-o", exe, src)...)
		b := openBinary(t, exe)
		g, _ := b.build(t, "check")
		var names []string
		for _, c := range g.Calls {
			names = append(names, c.Name)
		}
		if !strings.Contains(strings.Join(names, " "), "exit") {
			t.Errorf("%v: calls of check are named %q, want exit among them", flags, names)
		}
		var buf [4]byte
		if _, err := b.im.ReadImage(1<<62, buf[:]); !errors.Is(err, ErrNotMapped) {
			t.Errorf("%v: ReadImage(1<<62) = %v, want ErrNotMapped", flags, err)
		}
	}
}

// TestELFImageGOT checks GOT slot names on a -fno-plt gcc binary: check's
// call of exit reads exit's slot (`call *exit@GOTPCREL(%rip)`).
func TestELFImageGOT(t *testing.T) {
	gcc := mustHave(t, "gcc")
	src, _ := filepath.Abs("testdata/switch.c")
	dir := t.TempDir()
	exe := filepath.Join(dir, "a.out")
	run(t, dir, gcc, "-fno-plt", "-O2", "-o", exe, src)
	b := openBinary(t, exe)
	_, fn := b.build(t, "check")
	code, _ := b.st.Code(fn.Addr, int(fn.Size))
	var names []string
	for off := 0; off < len(code); {
		inst, n, err := decodeInst(code[off:])
		if err != nil {
			t.Fatalf("check+%#x: %v", off, err)
		}
		off += n
		if m, ok := inst.Args[0].(x86asm.Mem); ok && inst.Op == x86asm.CALL && m.Base == x86asm.RIP {
			names = append(names, b.im.GOTName(fn.Addr+uint64(off)+uint64(m.Disp)))
		}
	}
	if !slices.Contains(names, "exit") {
		t.Errorf("GOT slots of check's calls are named %q, want exit among them", names)
	}
	// The graph names those calls too, and ends exit's block as a call
	// that does not return (abort, last, is a jump through its slot).
	g, _ := b.build(t, "check")
	noret := map[string]bool{}
	for _, c := range g.Calls {
		if c.Name == "" {
			continue
		}
		i, ok := g.BlockAt(c.Addr)
		noret[c.Name] = c.NoReturn && ok && g.Blocks[i].Term == TermNoReturn
	}
	for _, name := range []string{"exit"} {
		if !noret[name] {
			t.Errorf("check's call of %s through the GOT is not a call that does not return (%v)\n%v", name, noret, g)
		}
	}
}
