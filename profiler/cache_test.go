package profiler

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/lineinfo"
	"github.com/patchprof/patchprof/symtab"
)

// bigC builds a C program of n functions of a few statements each with
// gcc -g -O0: a line table and .debug_info of some size.
func bigC(tb testing.TB, n int) *symtab.File {
	tb.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		tb.Skip("gcc not in PATH: cannot build the program to analyse")
	}
	dir := tb.TempDir()
	var src strings.Builder
	for i := range n {
		fmt.Fprintf(&src, "int f%d(int x) {\n\tint y = x * %d;\n\tif (y > 7)\n\t\ty -= 3;\n\tfor (int i = 0; i < x; i++)\n\t\ty += i;\n\treturn y;\n}\n", i, i)
	}
	src.WriteString("int main(void) { return f0(1) - 1; }\n")
	if err := os.WriteFile(filepath.Join(dir, "big.c"), []byte(src.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command("gcc", "-g", "-O0", "-o", "big", "big.c")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	sym, err := symtab.Open(filepath.Join(dir, "big"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sym.Close() })
	return sym
}

func cachedSelection(tb testing.TB) *selection {
	return &selection{cache: openCache(Config{Cache: true, CacheDir: filepath.Join(tb.TempDir(), "cache")})}
}

// TestCacheServesTheSame: what the cache serves equals what the readers
// return, and the second read is a hit.
func TestCacheServesTheSame(t *testing.T) {
	sym := bigC(t, 50)
	s := cachedSelection(t)
	want, err := lineinfo.ReadWith(sym.Path, s.readOptions())
	if err != nil {
		t.Fatal(err)
	}
	wantSubs, _ := lineinfo.Subprograms(sym.Path)
	for _, run := range []string{"miss, stored", "hit"} {
		got, err := s.readLines(sym)
		if err != nil {
			t.Fatal(err)
		}
		subs := s.subprograms(sym)
		notes := s.cache.Notes()
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(subs, wantSubs) {
			t.Errorf("%s: the cache served another line table or other subprograms", run)
		}
		if len(notes) < 2 || !strings.HasSuffix(notes[len(notes)-2], run) || !strings.HasSuffix(notes[len(notes)-1], run) {
			t.Errorf("notes %q, want the last two to end %q", notes, run)
		}
	}
	// Without the cache: no notes, the same tables.
	plain := &selection{cache: openCache(Config{})}
	if got, _ := plain.readLines(sym); !reflect.DeepEqual(got, want) || len(plain.cache.Notes()) != 0 {
		t.Error("without the cache: another table, or notes")
	}
}

// BenchmarkAnalysisCache: a module's line table and subprograms read
// from the file (read) against served by a warm cache (cache), on a C
// program of 5,000 functions.
func BenchmarkAnalysisCache(b *testing.B) {
	sym := bigC(b, 5000)
	s := cachedSelection(b)
	b.Run("read", func(b *testing.B) {
		for range b.N {
			if _, err := lineinfo.ReadWith(sym.Path, s.readOptions()); err != nil {
				b.Fatal(err)
			}
			lineinfo.Subprograms(sym.Path)
		}
	})
	s.readLines(sym)
	s.subprograms(sym)
	s.cache.wait()
	b.Run("cache", func(b *testing.B) {
		for range b.N {
			if _, err := s.readLines(sym); err != nil {
				b.Fatal(err)
			}
			s.subprograms(sym)
		}
	})
}
