package lineinfo

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// progC is the C target; the test asserts rows at its numbered lines.
const progC = `#include <stdio.h>

int add(int a, int b)
{
	int x = 1;
	return a + b + x;
}

int main(int argc, char **argv)
{
	int s = 0;
	for (int i = 0; i < argc; i++)
		s += add(i, 2);
	printf("%d\n", s);
	return 0;
}
`

const (
	lineX    = 5  // int x = 1;
	linePrtf = 14 // printf
)

// mustHaveCC skips the test when there is no C compiler to build targets.
func mustHaveCC(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not found in PATH: cannot build test executables")
	}
}

// buildC compiles progC with gcc and flags in a fresh temporary directory,
// showing the compiler's output on failure. It returns the executable and
// the absolute source path.
func buildC(t testing.TB, flags ...string) (exe, src string) {
	t.Helper()
	mustHaveCC(t)
	dir := t.TempDir()
	src = filepath.Join(dir, "prog.c")
	if err := os.WriteFile(src, []byte(progC), 0o644); err != nil {
		t.Fatal(err)
	}
	exe = filepath.Join(dir, "prog")
	// Compile from inside dir with a relative source name, so that the
	// table's paths are relative to the compilation directory.
	cmd := exec.Command("gcc", append(append([]string{}, flags...), "-o", "prog", "prog.c")...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
	return exe, src
}

// symbol returns the [start, end) of a function symbol, read with debug/elf
// as an oracle independent of package symtab.
func symbol(t *testing.T, exe, name string) (uint64, uint64) {
	t.Helper()
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			return s.Value, s.Value + s.Size
		}
	}
	t.Fatalf("no symbol %s in %s", name, exe)
	return 0, 0
}

func TestReadC(t *testing.T) {
	for _, flags := range [][]string{{"-g", "-O0"}, {"-g", "-O0", "-gdwarf-4"}, {"-g", "-O0", "-no-pie"}, {"-g", "-O0", "-gz"}} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			exe, src := buildC(t, flags...)
			tab, err := Read(exe)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tab.Files {
				if !filepath.IsAbs(f) || filepath.Clean(f) != f {
					t.Errorf("file %q is not absolute and clean", f)
				}
			}
			lo, hi := symbol(t, exe, "add")
			var found bool
			for _, r := range tab.Rows {
				if tab.Files[r.File] == src && r.Line == lineX {
					found = true
					if r.Addr < lo || r.Addr >= hi {
						t.Errorf("line %d row at %#x outside add [%#x, %#x)", lineX, r.Addr, lo, hi)
					}
					if file, line, ok := tab.Lookup(r.Addr); !ok || file != src || line != lineX {
						t.Errorf("Lookup(%#x) = %q, %d, %v", r.Addr, file, line, ok)
					}
				}
			}
			if !found {
				t.Errorf("no row for %s:%d in %v", src, lineX, tab.Rows)
			}
			lo, hi = symbol(t, exe, "main")
			if file, line, ok := tab.Lookup(hi - 1); !ok || file != src || line != 16 {
				t.Errorf("Lookup(last byte of main) = %q, %d, %v, want %s:16", file, line, ok, src)
			}
			if _, _, ok := tab.Lookup(hi + 0x100000); ok {
				t.Error("Lookup far past the code succeeded")
			}
			if tab.GoRoot() != "" {
				t.Errorf("GoRoot() = %q for a C program", tab.GoRoot())
			}
		})
	}
}

// TestReadMatchesObjdump compares the statement rows with objdump's
// decoded line table, an independent reader.
func TestReadMatchesObjdump(t *testing.T) {
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Skip("objdump not found in PATH: no oracle for the line table")
	}
	for _, flags := range [][]string{
		{"-g", "-O0"}, {"-g", "-O2"}, {"-g", "-O2", "-gdwarf-4"}, {"-g", "-O2", "-gz=zlib-gnu"},
		{"-g", "-O2", "-ffunction-sections", "-Wl,--gc-sections"},
	} {
		t.Run(strings.Join(flags, " "), func(t *testing.T) {
			exe, _ := buildC(t, flags...)
			tab, err := Read(exe)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			for _, r := range tab.Rows {
				got[rowKey(path.Base(tab.Files[r.File]), uint64(r.Line), r.Addr)] = true
			}
			want := objdumpRows(t, exe)
			for k := range want {
				if !got[k] {
					t.Errorf("objdump has row %s, Read does not", k)
				}
			}
			for k := range got {
				if !want[k] {
					t.Errorf("Read has row %s, objdump does not", k)
				}
			}
		})
	}
}

func rowKey(file string, line, addr uint64) string {
	return file + ":" + strconv.FormatUint(line, 10) + "@" + strconv.FormatUint(addr, 16)
}

// objdumpRows parses `objdump --dwarf=decodedline`: statement rows (Stmt
// column "x") except zero-length ones at their sequence's end address.
func objdumpRows(t *testing.T, exe string) map[string]bool {
	out, err := exec.Command("objdump", "--dwarf=decodedline", exe).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	rows := map[string]bool{}
	var seq []string
	var seqAddr []uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || !strings.HasPrefix(f[2], "0x") {
			continue
		}
		addr, err := strconv.ParseUint(f[2][2:], 16, 64)
		if err != nil {
			continue
		}
		if f[1] == "-" { // end of sequence
			for i, k := range seq {
				if seqAddr[i] != addr {
					rows[k] = true
				}
			}
			seq, seqAddr = nil, nil
			continue
		}
		line, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil || line == 0 || f[len(f)-1] != "x" {
			continue
		}
		seq = append(seq, rowKey(path.Base(f[0]), line, addr))
		seqAddr = append(seqAddr, addr)
	}
	return rows
}

func TestReadNoDebugInfo(t *testing.T) {
	exe, _ := buildC(t, "-O2", "-g0")
	_, err := Read(exe)
	if !errors.Is(err, ErrNoLineInfo) {
		t.Fatalf("err = %v, want ErrNoLineInfo", err)
	}
	if !strings.Contains(err.Error(), "-g") {
		t.Errorf("err = %q does not say to rebuild with -g", err)
	}
}

// buildGo builds a tiny Go program into a temporary directory.
func buildGo(t testing.TB) (exe, src string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not found in PATH: cannot build a Go target")
	}
	dir := t.TempDir()
	src = filepath.Join(dir, "main.go")
	files := map[string]string{
		"go.mod":  "module example.com/tiny\n\ngo 1.21\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe = filepath.Join(dir, "tiny")
	cmd := exec.Command(goTool, "build", "-o", exe, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
	return exe, src
}

func TestReadGo(t *testing.T) {
	exe, src := buildGo(t)
	tab, err := Read(exe)
	if err != nil {
		t.Fatal(err)
	}
	var lines []uint32
	for _, r := range tab.Rows {
		if tab.Files[r.File] == src {
			lines = append(lines, r.Line)
		}
	}
	if !containsLine(lines, 5) || !containsLine(lines, 6) {
		t.Errorf("rows of %s have lines %v, want 5 and 6", src, lines)
	}
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(strings.TrimSpace(string(out)), "src") + "/"
	if got := tab.GoRoot(); got != want {
		t.Errorf("GoRoot() = %q, want %q", got, want)
	}
}

func containsLine(lines []uint32, l uint32) bool {
	for _, x := range lines {
		if x == l {
			return true
		}
	}
	return false
}

// TestReadCorrupt is the "does not crash" table over whole files.
func TestReadCorrupt(t *testing.T) {
	exe, _ := buildC(t, "-g", "-O2")
	real, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	sec := ef.Section(".debug_line")
	off, size := int(sec.Offset), int(sec.Size)
	ef.Close()

	rnd := rand.New(rand.NewSource(1))
	cases := map[string][]byte{
		"empty":   {},
		"garbage": randBytes(rnd, 2048),
		"elf-hdr": real[:64],
	}
	// Garbage over .debug_line, and the section cut short by zeroing its tail.
	g := bytes.Clone(real)
	copy(g[off:off+size], randBytes(rnd, size))
	cases["debug_line-garbage"] = g
	for _, n := range []int{1, 4, 10, 20, 40, size / 2, size - 1} {
		z := bytes.Clone(real)
		clear(z[off+n : off+size])
		cases["debug_line-zeroed-from-"+strconv.Itoa(n)] = z
	}
	for _, n := range []int{100, 1000, len(real) / 2, off + size/2} {
		cases["file-truncated-"+strconv.Itoa(n)] = real[:n]
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "bin")
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			tab, err := Read(p)
			if err == nil {
				// Damage in the file's other sections may leave the line
				// table readable; the result must then be usable.
				for _, r := range tab.Rows {
					tab.Lookup(r.Addr)
				}
			}
		})
	}
	// Cutting the section bytes at every length must never panic.
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	line := data[off : off+size]
	for n := range len(line) {
		if _, err := parseLineSection(line[:n], nil, nil, false); err == nil && n > 0 {
			t.Errorf("section cut to %d of %d bytes: no error", n, len(line))
		}
	}
}

func randBytes(rnd *rand.Rand, n int) []byte {
	b := make([]byte, n)
	rnd.Read(b)
	return b
}

// BenchmarkRead reads the line table of a Go program built at test time
// (a few MB, with the runtime's tables).
func BenchmarkRead(b *testing.B) {
	exe, _ := buildGo(b)
	st, err := os.Stat(exe)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(exe); err != nil {
			b.Fatal(err)
		}
	}
}
