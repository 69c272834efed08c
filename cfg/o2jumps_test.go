package cfg

import (
	"debug/elf"
	"encoding/binary"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// An objdumpInst is one line of objdump's disassembly: the instruction's
// address and its text ("movslq (%r13,%rax,4),%rax"), the comment
// objdump adds for a RIP-relative operand ("# 2004 <...>") included.
type objdumpInst struct {
	addr uint64
	text string
}

// objdumpFunc disassembles the function name of path with objdump.
func objdumpFunc(t *testing.T, path, name string) []objdumpInst {
	t.Helper()
	objdump := mustHave(t, "objdump")
	out, err := exec.Command(objdump, "-d", "--no-show-raw-insn", "--disassemble="+name, path).CombinedOutput()
	if err != nil {
		t.Fatalf("objdump: %v\n%s", err, out)
	}
	re := regexp.MustCompile(`^\s*([0-9a-f]+):\s+(.*)$`)
	var insts []objdumpInst
	for _, line := range strings.Split(string(out), "\n") {
		if m := re.FindStringSubmatch(line); m != nil {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			insts = append(insts, objdumpInst{a, strings.Join(strings.Fields(m[2]), " ")})
		}
	}
	if len(insts) == 0 {
		t.Fatalf("objdump shows no instruction of %s in %s:\n%s", name, path, out)
	}
	return insts
}

// objdumpTable reads, from objdump's text alone, the relative jump table
// gcc -fpie gives the switch of a function: the table's indirect jump, its
// base (the address objdump puts beside the lea that loads the register
// movslq indexes), and its number of entries (one more than the last
// compare's immediate before the jump, the bound check).
func objdumpTable(t *testing.T, insts []objdumpInst) (jump, base uint64, n int, lea uint64) {
	t.Helper()
	jmpRE := regexp.MustCompile(`^(?:notrack )?jmp \*%r`)
	movRE := regexp.MustCompile(`^movslq (?:0x0)?\((%r[0-9a-z]+),%r[0-9a-z]+,4\)`)
	cmpRE := regexp.MustCompile(`^cmp[bwlq]? \$0x([0-9a-f]+),`)
	j := slices.IndexFunc(insts, func(in objdumpInst) bool { return jmpRE.MatchString(in.text) })
	if j < 0 {
		t.Fatalf("no jmp *%%reg in %v", insts)
	}
	jump = insts[j].addr
	reg := ""
	for i := j; i >= 0 && n == 0; i-- {
		if m := movRE.FindStringSubmatch(insts[i].text); m != nil && reg == "" {
			reg = m[1]
		}
		if m := cmpRE.FindStringSubmatch(insts[i].text); m != nil {
			imm, _ := strconv.ParseUint(m[1], 16, 64)
			n = int(imm) + 1
		}
	}
	if reg == "" || n == 0 {
		t.Fatalf("no movslq through a base register or no bound compare before the jump at %#x", jump)
	}
	leaRE := regexp.MustCompile(`^lea 0x[0-9a-f]+\(%rip\),` + regexp.QuoteMeta(reg) + ` # ([0-9a-f]+)`)
	for _, in := range insts {
		if m := leaRE.FindStringSubmatch(in.text); m != nil {
			base, _ = strconv.ParseUint(m[1], 16, 64)
			lea = in.addr
		}
	}
	if base == 0 {
		t.Fatalf("no lea of the table into %s", reg)
	}
	return jump, base, n, lea
}

// elfTable reads n 4-byte signed offsets at base from the executable's
// sections with debug/elf (not through the Image under test) and returns
// the addresses they give.
func elfTable(t *testing.T, path string, base uint64, n int) []uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Type != elf.SHT_PROGBITS || base < s.Addr || base+uint64(4*n) > s.Addr+s.Size {
			continue
		}
		data, err := s.Data()
		if err != nil {
			t.Fatal(err)
		}
		out := make([]uint64, n)
		for i := range out {
			off := base - s.Addr + uint64(4*i)
			out[i] = base + uint64(int64(int32(binary.LittleEndian.Uint32(data[off:]))))
		}
		return out
	}
	t.Fatalf("%s: no section holds the table at %#x", path, base)
	return nil
}

// TestO2Jumps builds o2jumps.c with gcc -O2 as a PIE, as Debian builds
// Jim Tcl, and checks each shape against objdump: the switches of
// quoting, format and sortby each have their table, its base, bound and
// targets as objdump's text and the ELF section say; evalnode's jump
// through its operator table is a tail call and its own switch a table.
func TestO2Jumps(t *testing.T) {
	gcc := mustHave(t, "gcc")
	src, err := filepath.Abs("testdata/o2jumps.c")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, bld := range []struct {
		name  string
		flags []string
	}{
		{"O2-pie", []string{"-O2", "-fpie", "-pie"}},
		{"O2-pie-cet", []string{"-O2", "-fpie", "-pie", "-fcf-protection=full"}},
	} {
		t.Run(bld.name, func(t *testing.T) {
			exe := filepath.Join(dir, bld.name)
			run(t, dir, gcc, append(append([]string{}, bld.flags...), "-g", "-o", exe, src)...)
			b := openBinary(t, exe)
			for _, name := range []string{"quoting", "format", "sortby"} {
				g, fn := b.build(t, name)
				checkAgainstObjdump(t, exe, g, fn)
				insts := objdumpFunc(t, exe, name)
				jump, base, n, lea := objdumpTable(t, insts)
				checkTable(t, g, jump, base, elfTable(t, exe, base, n))
				jb, _ := g.BlockAt(jump)
				lb, _ := g.BlockAt(lea)
				switch name {
				case "quoting", "format":
					// The shape: the table's address loaded outside the
					// jump's block and every block just before it.
					if lb == jb || slices.Contains(predsOf(g, jb), lb) {
						t.Errorf("%s: the table's address is loaded at %#x, next to its jump at %#x: not the shape under test", name, lea, jump)
					}
				case "sortby":
					if !storeBetweenCompareAndBranch(insts, jump) {
						t.Errorf("sortby: no store between the bound check and its branch: not the shape under test\n%v", insts)
					}
				}
			}

			g, _ := b.build(t, "evalnode")
			tail := 0
			for _, in := range objdumpFunc(t, exe, "evalnode") {
				if strings.Contains(in.text, "jmp *0x8(%r") {
					tail = int(in.addr)
				}
			}
			i, ok := g.BlockAt(uint64(tail))
			if tail == 0 || !ok || g.Blocks[i].Last != uint64(tail) || g.Blocks[i].Term != TermTailCall {
				t.Errorf("evalnode: the jump through the operator table (%#x) does not end a tail-call block\n%v", tail, g)
			}
			if len(g.Tables) != 1 || g.Tables[0].Computed || g.Tables[0].Jump == uint64(tail) {
				t.Errorf("evalnode: tables %+v, want its switch's alone", g.Tables)
			}
		})
	}
}

// checkTable checks that g has the table of the jump at jump, based at
// base, with the targets want, each the start of a block.
func checkTable(t *testing.T, g *Graph, jump, base uint64, want []uint64) {
	t.Helper()
	i := slices.IndexFunc(g.Tables, func(tb Table) bool { return tb.Jump == jump })
	if i < 0 {
		t.Fatalf("%s: no table for the jump at %#x\n%v", g.Name, jump, g)
	}
	tb := g.Tables[i]
	if tb.Computed || tb.Base != base || tb.EntrySize != 4 || !tb.Relative {
		t.Errorf("%s: table %+v, want 4-byte relative entries at %#x", g.Name, tb, base)
	}
	if !slices.Equal(tb.Targets, want) {
		t.Errorf("%s: table targets %#x, the ELF section says %#x", g.Name, tb.Targets, want)
	}
	for _, a := range want {
		if j, ok := g.BlockAt(a); !ok || g.Blocks[j].Start != a {
			t.Errorf("%s: table target %#x starts no block", g.Name, a)
		}
	}
}

// predsOf returns the blocks of g with an edge to block i.
func predsOf(g *Graph, i int) []int {
	var out []int
	for _, e := range g.Edges {
		if e.To == i {
			out = append(out, e.From)
		}
	}
	return out
}

// storeBetweenCompareAndBranch reports whether objdump shows a store to
// the stack between the last compare of memory before jump and the branch
// that follows it.
func storeBetweenCompareAndBranch(insts []objdumpInst, jump uint64) bool {
	cmp := -1
	for i, in := range insts {
		if in.addr >= jump {
			break
		}
		if strings.HasPrefix(in.text, "cmpl $") && strings.Contains(in.text, "(%r") {
			cmp = i
		}
	}
	if cmp < 0 {
		return false
	}
	for _, in := range insts[cmp+1:] {
		if strings.HasPrefix(in.text, "j") {
			return false
		}
		if strings.HasPrefix(in.text, "mov ") && strings.HasSuffix(in.text, "(%rsp)") {
			return true
		}
	}
	return false
}
