package breakpoint

import (
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/symtab"
)

// mustHaveCC skips the test when there is no C compiler to build targets.
func mustHaveCC(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found in PATH: cannot build test executables")
	}
}

// buildSource compiles source (a C file named name) with gcc -g and opt
// in a temporary directory and opens the executable's symbols and line
// table, closed when the test ends.
func buildSource(t *testing.T, name, source, opt string) (*symtab.File, *lineinfo.Table) {
	t.Helper()
	mustHaveCC(t)
	dir := t.TempDir()
	src := filepath.Join(dir, name)
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := strings.TrimSuffix(src, ".c")
	if out, err := exec.Command("gcc", "-g", opt, "-o", exe, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return openBuilt(t, exe)
}

// openBuilt opens exe's symbols (closed at the test's end) and line table.
func openBuilt(t *testing.T, exe string) (*symtab.File, *lineinfo.Table) {
	t.Helper()
	sym, err := symtab.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sym.Close() })
	lt, err := lineinfo.Read(exe)
	if err != nil {
		t.Fatal(err)
	}
	return sym, lt
}

// planSources are the files of the plan-test target, in testdata.
var planSources = []string{"plan.c", "other.c"}

// A target is a built test executable, opened.
type target struct {
	dir string // holds the sources and the executable
	sym *symtab.File
	lt  *lineinfo.Table
}

// buildTarget compiles testdata/plan.c and other.c with gcc -g and opt in a
// fresh temporary directory, showing the compiler's output on failure, and
// opens the result.
func buildTarget(t *testing.T, opt string) *target {
	t.Helper()
	mustHaveCC(t)
	dir := t.TempDir()
	for _, name := range planSources {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{"-g", opt, "-o", "prog"}, planSources...)
	cmd := exec.Command("gcc", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	sym, lt := openBuilt(t, filepath.Join(dir, "prog"))
	return &target{dir: dir, sym: sym, lt: lt}
}

// funcIndex returns the index of the function called name.
func (tg *target) funcIndex(t *testing.T, name string) int {
	t.Helper()
	for i, f := range tg.sym.Funcs {
		if f.Name == name || slices.Contains(f.Aliases, name) {
			return i
		}
	}
	t.Fatalf("no function %s in %s", name, tg.dir)
	return -1
}

// sourceLine returns the 1-based line of testdata/file holding text.
func sourceLine(t *testing.T, file, text string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("%q not in testdata/%s", text, file)
	return 0
}

// checkInsnStarts checks that every site of p is the start of an instruction
// by a linear decode of its function, and lies inside that function.
func checkInsnStarts(t *testing.T, tg *target, p *Plan) {
	t.Helper()
	starts := map[int32][]uint64{}
	for i := 0; i < p.Table.Len(); i++ {
		addr, fn := p.Table.Addr(i), p.Table.Func(i)
		if fn < 0 || int(fn) >= len(tg.sym.Funcs) {
			t.Errorf("site %d at %#x: function index %d", i, addr, fn)
			continue
		}
		f := tg.sym.Funcs[fn]
		if addr < f.Addr || addr >= f.Addr+f.Size {
			t.Errorf("site %d at %#x: outside its function %s [%#x, %#x)", i, addr, f.Name, f.Addr, f.Addr+f.Size)
			continue
		}
		s, ok := starts[fn]
		if !ok {
			code, ok := tg.sym.Code(f.Addr, int(f.Size))
			if !ok {
				t.Fatalf("no code for %s", f.Name)
			}
			s, _ = symtab.InstructionStarts(code, f.Addr) // the starts before a bad byte are good
			starts[fn] = s
		}
		// A function site is its symbol's address, an instruction start
		// even where the decoder does not know the instruction (endbr64).
		if _, found := slices.BinarySearch(s, addr); !found && addr != f.Addr {
			t.Errorf("site %d at %#x in %s is not an instruction start", i, addr, f.Name)
		}
		if got := p.Table.IsEntry(i); got != (addr == f.Addr) {
			t.Errorf("site %d at %#x in %s: IsEntry = %v", i, addr, f.Name, got)
		}
	}
}

// hasLine reports whether p plants a row of file:line, and where.
func hasLine(p *Plan, file string, line int) (addrs []uint64) {
	for i := 0; i < p.Table.Len(); i++ {
		for _, l := range p.SiteLines(i) {
			if r := p.Lines[l]; r.Line == line && filepath.Base(r.File) == file {
				addrs = append(addrs, p.Table.Addr(i))
			}
		}
	}
	return addrs
}

func TestNewPlanLines(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			tg := buildTarget(t, opt)
			p := NewPlan(tg.sym, tg.lt, PlanOptions{RowSites: true, Lines: true})
			if p.Table.Len() == 0 {
				t.Fatal("no sites")
			}
			if len(p.Funcs) != len(tg.sym.Funcs) {
				t.Fatalf("len(Funcs) = %d, want %d", len(p.Funcs), len(tg.sym.Funcs))
			}
			if len(p.Table.cnt.LineEntries) != len(p.Lines) {
				t.Errorf("len(LineEntries) = %d, len(Lines) = %d", len(p.Table.cnt.LineEntries), len(p.Lines))
			}
			checkInsnStarts(t, tg, p)
			for i := 0; i < p.Table.Len(); i++ {
				if k := p.Table.Kind(i); k != KindLine {
					t.Errorf("site %d at %#x: Kind %v, want line", i, p.Table.Addr(i), k)
				}
				if len(p.Table.Lines(i)) == 0 {
					t.Errorf("site %d at %#x: no lines", i, p.Table.Addr(i))
				}
			}
			for _, d := range p.Dropped {
				// gcc's rows start instructions; crt code has no rows.
				if d.Reason == ReasonNotInsnStart || d.Reason == ReasonUndecodable {
					t.Errorf("dropped %#x %s:%d: %s", d.Addr, d.File, d.Line, d.Reason)
				}
			}

			// Every statement row is planted or dropped with a reason.
			dropped := map[uint64]bool{}
			for _, d := range p.Dropped {
				dropped[d.Addr] = true
			}
			for _, r := range tg.lt.Rows {
				if dropped[r.Addr] {
					continue
				}
				i, ok := p.Table.Index(r.Addr)
				if !ok {
					t.Errorf("row %#x %s:%d neither planted nor dropped", r.Addr, tg.lt.Files[r.File], r.Line)
					continue
				}
				found := false
				for _, l := range p.SiteLines(i) {
					found = found || p.Lines[l] == LineRef{File: tg.lt.Files[r.File], Line: int(r.Line)}
				}
				if !found {
					t.Errorf("row %#x %s:%d planted without its line", r.Addr, tg.lt.Files[r.File], r.Line)
				}
			}

			body := sourceLine(t, "plan.c", "s += i * other(i);")
			if len(hasLine(p, "plan.c", body)) == 0 {
				t.Errorf("no site for the loop body, plan.c:%d", body)
			}
			ret := sourceLine(t, "other.c", "if (x > 3)")
			if len(hasLine(p, "other.c", ret)) == 0 {
				t.Errorf("no site for other.c:%d", ret)
			}
			w := tg.funcIndex(t, "work")
			if fi := p.Funcs[w]; fi.Name != "work" || fi.Addr != tg.sym.Funcs[w].Addr || filepath.Base(fi.File) != "plan.c" || fi.Line == 0 || fi.Planted {
				t.Errorf("Funcs[work] = %+v", fi)
			}
		})
	}
}

func TestNewPlanFuncs(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			tg := buildTarget(t, opt)
			for _, lt := range []*lineinfo.Table{nil, tg.lt} {
				p := NewPlan(tg.sym, lt, PlanOptions{Funcs: true})
				if len(p.Lines) != 0 || len(p.Dropped) != 0 {
					t.Errorf("function plan has %d lines, %d dropped rows", len(p.Lines), len(p.Dropped))
				}
				if p.Table.Len() != len(tg.sym.Funcs) {
					t.Errorf("%d sites for %d functions", p.Table.Len(), len(tg.sym.Funcs))
				}
				checkInsnStarts(t, tg, p)
				for i := 0; i < p.Table.Len(); i++ {
					fn := p.Table.Func(i)
					if k := p.Table.Kind(i); k != KindFunc {
						t.Errorf("site %d: Kind %v, want func", i, k)
					}
					if !p.Table.IsEntry(i) || p.Table.Addr(i) != tg.sym.Funcs[fn].Addr {
						t.Errorf("site %d at %#x: not the entry of %s", i, p.Table.Addr(i), tg.sym.Funcs[fn].Name)
					}
					if !p.Funcs[fn].Planted {
						t.Errorf("%s has a site but Planted is false", p.Funcs[fn].Name)
					}
				}
				i, _ := p.Table.Index(tg.sym.Funcs[tg.funcIndex(t, "repentry")].Addr)
				if !p.Table.IsRep(i) || p.Table.InsnLen(i) != 2 {
					t.Errorf("repentry (rep stosb): IsRep %v, InsnLen %d, want true, 2", p.Table.IsRep(i), p.Table.InsnLen(i))
				}
				i, _ = p.Table.Index(tg.sym.Funcs[tg.funcIndex(t, "crafted")].Addr)
				if p.Table.IsRep(i) {
					t.Errorf("crafted (movabs) marked rep")
				}
			}

			// Lines and functions: entry rows carry both kinds.
			p := NewPlan(tg.sym, tg.lt, PlanOptions{RowSites: true, Funcs: true, Lines: true})
			w := tg.funcIndex(t, "other")
			i, ok := p.Table.Index(tg.sym.Funcs[w].Addr)
			if !ok || p.Table.Kind(i) != KindLine|KindFunc || !p.Table.IsEntry(i) || p.Table.Func(i) != int32(w) {
				t.Errorf("other's entry: site %d (%v), kind %v", i, ok, p.Table.Kind(i))
			}
		})
	}
}

// sitesOnlyIn checks that every site of p lies in one of the functions named.
func sitesOnlyIn(t *testing.T, tg *target, p *Plan, names ...string) {
	t.Helper()
	if p.Table.Len() == 0 {
		t.Errorf("no sites; want some in %v", names)
	}
	for i := 0; i < p.Table.Len(); i++ {
		addr := p.Table.Addr(i)
		k, ok := tg.sym.FuncAt(addr)
		if !ok || !slices.Contains(names, tg.sym.Funcs[k].Name) || p.Table.Func(i) != int32(k) {
			t.Errorf("site %d at %#x (func %d) outside %v", i, addr, p.Table.Func(i), names)
		}
	}
	for i, fi := range p.Funcs {
		if fi.Planted && !slices.Contains(names, fi.Name) {
			t.Errorf("Funcs[%d] %s planted", i, fi.Name)
		}
	}
}

func TestNewPlanFilters(t *testing.T) {
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			tg := buildTarget(t, opt)
			isOther := func(path string) bool { return filepath.Base(path) == "other.c" }
			all := NewPlan(tg.sym, tg.lt, PlanOptions{RowSites: true, Lines: true, Funcs: true})

			p := NewPlan(tg.sym, tg.lt, PlanOptions{RowSites: true, Lines: true, Funcs: true,
				FuncFilter: func(name string) bool { return name == "work" || name == "main" }})
			sitesOnlyIn(t, tg, p, "work", "main")
			// Filtering by function keeps all of that function's sites.
			for i := 0; i < all.Table.Len(); i++ {
				name := tg.sym.Funcs[all.Table.Func(i)].Name
				if _, ok := p.Table.Index(all.Table.Addr(i)); ok != (name == "work" || name == "main") {
					t.Errorf("site %#x in %s: kept = %v", all.Table.Addr(i), name, ok)
				}
			}

			p = NewPlan(tg.sym, tg.lt, PlanOptions{RowSites: true, Lines: true, Funcs: true, FileFilter: isOther})
			sitesOnlyIn(t, tg, p, "other")
			for _, l := range p.Lines {
				if !isOther(l.File) {
					t.Errorf("line %s:%d kept by a filter for other.c", l.File, l.Line)
				}
			}
			// FileFilter wins over SkipFile.
			q := NewPlan(tg.sym, tg.lt, PlanOptions{RowSites: true, Lines: true, Funcs: true, FileFilter: isOther, SkipFile: isOther})
			if q.Table.Len() != p.Table.Len() {
				t.Errorf("SkipFile changed a FileFilter plan: %d sites, want %d", q.Table.Len(), p.Table.Len())
			}

			p = NewPlan(tg.sym, tg.lt, PlanOptions{RowSites: true, Lines: true, Funcs: true, SkipFile: isOther})
			o := tg.funcIndex(t, "other")
			for i := 0; i < p.Table.Len(); i++ {
				if p.Table.Func(i) == int32(o) {
					t.Errorf("site %#x in other.c's function kept with SkipFile", p.Table.Addr(i))
				}
			}
			for _, l := range p.Lines {
				if isOther(l.File) {
					t.Errorf("line %s:%d kept with SkipFile", l.File, l.Line)
				}
			}
			if len(hasLine(p, "plan.c", sourceLine(t, "plan.c", "s += i * other(i);"))) == 0 {
				t.Errorf("SkipFile for other.c dropped plan.c's loop body")
			}
			// SkipFunc leaves out functions by name, with their rows.
			p = NewPlan(tg.sym, tg.lt, PlanOptions{RowSites: true, Lines: true, Funcs: true,
				SkipFunc: func(name, file string) bool { return name == "work" || isOther(file) }})
			for i := 0; i < p.Table.Len(); i++ {
				if name := tg.sym.Funcs[p.Table.Func(i)].Name; name == "work" || name == "other" {
					t.Errorf("site %#x in %s kept with SkipFunc", p.Table.Addr(i), name)
				}
			}
			if _, ok := p.Table.Index(tg.sym.Funcs[tg.funcIndex(t, "main")].Addr); !ok {
				t.Errorf("SkipFunc for work and other.c dropped main")
			}

			p = NewPlan(tg.sym, tg.lt, PlanOptions{RowSites: true, Lines: true, Funcs: true, SkipFile: isOther})
			// SkipFile does not drop functions without line information (the
			// hand-written ones).
			if _, ok := p.Table.Index(tg.sym.Funcs[tg.funcIndex(t, "crafted")].Addr); !ok {
				t.Errorf("SkipFile dropped crafted, which has no source file")
			}
		})
	}
}

func TestNewPlanSyntheticRows(t *testing.T) {
	tg := buildTarget(t, "-O0")
	c := tg.sym.Funcs[tg.funcIndex(t, "crafted")].Addr
	u := tg.sym.Funcs[tg.funcIndex(t, "undecodable")].Addr
	b := tg.sym.Funcs[tg.funcIndex(t, "badstart")].Addr
	if c > u || u > b {
		t.Fatalf("crafted %#x, undecodable %#x, badstart %#x: not in source order", c, u, b)
	}
	const src, skipped = "/src/crafted.s", "/src/skipped.s"
	lt := &lineinfo.Table{
		Files: []string{src, skipped},
		Rows: []lineinfo.Row{
			{Addr: 1, File: 0, Line: 20}, // before every function
			{Addr: c + 0, File: 0, Line: 1},
			{Addr: c + 3, File: 0, Line: 2}, // inside movabs
			{Addr: c + 10, File: 0, Line: 3},
			{Addr: c + 12, File: 0, Line: 4},
			{Addr: c + 12, File: 0, Line: 5}, // two lines at one address
			{Addr: c + 15, File: 0, Line: 6},
			{Addr: c + 15, File: 1, Line: 30}, // a skipped file: neither planted nor dropped
			{Addr: u + 0, File: 0, Line: 10},
			{Addr: u + 1, File: 0, Line: 11}, // the undecodable byte
			{Addr: u + 2, File: 0, Line: 12}, // after it
			{Addr: b + 0, File: 0, Line: 13}, // nothing decodes in badstart
			{Addr: b + 1, File: 0, Line: 14},
			{Addr: 1 << 60, File: 0, Line: 21},
		},
	}
	p := NewPlan(tg.sym, lt, PlanOptions{
		RowSites:   true,
		Lines:      true,
		FuncFilter: func(name string) bool { return name == "crafted" || name == "undecodable" || name == "badstart" },
		SkipFile:   func(path string) bool { return path == skipped },
	})

	type site struct {
		addr  uint64
		lines []LineRef
		rep   bool
		len   int
	}
	want := []site{
		{addr: c, lines: []LineRef{{File: src, Line: 1}}},
		{addr: c + 10, lines: []LineRef{{File: src, Line: 3}}, rep: true, len: 2},
		{addr: c + 12, lines: []LineRef{{File: src, Line: 4}, {File: src, Line: 5}}, rep: true, len: 3},
		{addr: c + 15, lines: []LineRef{{File: src, Line: 6}}},
		{addr: u, lines: []LineRef{{File: src, Line: 10}}},
	}
	if p.Table.Len() != len(want) {
		t.Errorf("%d sites, want %d", p.Table.Len(), len(want))
	}
	for k, w := range want {
		i, ok := p.Table.Index(w.addr)
		if !ok {
			t.Errorf("no site at %#x", w.addr)
			continue
		}
		var got []LineRef
		for _, l := range p.SiteLines(i) {
			got = append(got, p.Lines[l])
		}
		if !slices.Equal(got, w.lines) {
			t.Errorf("site %d at %#x: lines %v, want %v", k, w.addr, got, w.lines)
		}
		if p.Table.IsRep(i) != w.rep || p.Table.InsnLen(i) != w.len {
			t.Errorf("site %d at %#x: IsRep %v, InsnLen %d, want %v, %d", k, w.addr, p.Table.IsRep(i), p.Table.InsnLen(i), w.rep, w.len)
		}
		if p.Table.IsEntry(i) != (w.addr == c || w.addr == u) {
			t.Errorf("site %d at %#x: IsEntry %v", k, w.addr, p.Table.IsEntry(i))
		}
	}
	wantDropped := []DroppedRow{
		{Addr: 1, File: src, Line: 20, Reason: ReasonOutsideFunc},
		{Addr: c + 3, File: src, Line: 2, Reason: ReasonNotInsnStart},
		{Addr: u + 1, File: src, Line: 11, Reason: ReasonUndecodable},
		{Addr: u + 2, File: src, Line: 12, Reason: ReasonUndecodable},
		{Addr: b + 0, File: src, Line: 13, Reason: ReasonUndecodable},
		{Addr: b + 1, File: src, Line: 14, Reason: ReasonUndecodable},
		{Addr: 1 << 60, File: src, Line: 21, Reason: ReasonOutsideFunc},
	}
	if !slices.Equal(p.Dropped, wantDropped) {
		t.Errorf("Dropped:\n got %+v\nwant %+v", p.Dropped, wantDropped)
	}
}

func TestMarkRep(t *testing.T) {
	for _, tc := range []struct {
		hex string
		rep bool
		len uint8
	}{
		{"f3a4", true, 2},        // rep movsb
		{"f348a5", true, 3},      // rep movsq
		{"f3aa", true, 2},        // rep stosb
		{"66f3ab", true, 3},      // rep stosw (operand-size prefix first)
		{"f366ab", true, 3},      // rep stosw (rep first)
		{"f2ae", true, 2},        // repne scasb
		{"f3a6", true, 2},        // repe cmpsb
		{"f36c", true, 2},        // rep insb
		{"f36f", true, 2},        // rep outsd
		{"f348ad", true, 3},      // rep lodsq
		{"67f3a4", true, 3},      // rep movsb with 32-bit addresses
		{"f3a4c3", true, 2},      // followed by more code
		{"f3c3", false, 0},       // rep ret: not a string instruction
		{"f30f1efa", false, 0},   // endbr64
		{"f30fb8c0", false, 0},   // popcnt
		{"f390", false, 0},       // pause
		{"a4", false, 0},         // movsb without rep
		{"48a5", false, 0},       // movsq without rep
		{"66ab", false, 0},       // stosw without rep
		{"f3", false, 0},         // a prefix and nothing else
		{"f348", false, 0},       // prefixes cut off
		{"", false, 0},           // no code
		{"90", false, 0},         // nop
		{"e8a4000000", false, 0}, // call whose displacement holds a4
	} {
		code, err := hex.DecodeString(tc.hex)
		if err != nil {
			t.Fatal(err)
		}
		s := SiteSpec{Addr: 0x1000}
		markRep(&s, bytes.Clone(code))
		if s.Rep != tc.rep || s.Len != tc.len {
			t.Errorf("markRep(% x): Rep %v, Len %d, want %v, %d", code, s.Rep, s.Len, tc.rep, tc.len)
		}
	}

	// Fifteen prefixes and no opcode: markRep stops at the architectural limit.
	s := SiteSpec{}
	markRep(&s, bytes.Repeat([]byte{0xf3}, 20))
	if s.Rep {
		t.Errorf("markRep(20 x f3): Rep")
	}
}
