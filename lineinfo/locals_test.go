package lineinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestFbreg(t *testing.T) {
	for _, tc := range []struct {
		loc  []byte
		off  int64
		read int
	}{
		{[]byte{0x91, 0x6c}, -20, 2},
		{[]byte{0x91, 0x10}, 16, 2},
		{[]byte{0x91, 0xe8, 0x7d}, -280, 3},
		{[]byte{0x03, 0, 0, 0, 0, 0, 0, 0, 0}, 0, 0}, // DW_OP_addr: a static
		{[]byte{0x91}, 0, 0},
		{[]byte{0x91, 0x80}, 0, 0}, // truncated
	} {
		off, n := fbreg(tc.loc)
		if off != tc.off || n != tc.read {
			t.Errorf("fbreg(% x) = %d, %d; want %d, %d", tc.loc, off, n, tc.off, tc.read)
		}
	}
}

// localsC declares a scalar, a struct and an array in main, and a static.
const localsC = `struct pt { int x, y; };
int main(void)
{
	static int calls;
	int n = 0;
	struct pt p = {1, 2};
	char buf[8];
	buf[0] = 0;
	calls++;
	return n + p.x + buf[0];
}
`

// TestLocalsC reads main's frame locals from gcc -g -O0 output: the
// struct and the array are aggregates, the static has no frame slot.
func TestLocalsC(t *testing.T) {
	mustHaveCC(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "l.c"), []byte(localsC), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("gcc", "-g", "-O0", "-o", "l", "l.c")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, b)
	}
	subs, err := Subprograms(filepath.Join(dir, "l"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Local{}
	for _, s := range subs {
		if s.Name == "main" {
			for _, l := range s.Locals {
				got[l.Name] = l
			}
		}
	}
	want := map[string]struct {
		line int
		agg  bool
	}{"n": {5, false}, "p": {6, true}, "buf": {7, true}}
	if len(got) != len(want) {
		t.Errorf("main's locals: %v, want n, p, buf", got)
	}
	for name, w := range want {
		l, ok := got[name]
		if !ok || l.Line != w.line || l.Aggregate != w.agg || l.FrameOffset >= 0 {
			t.Errorf("local %s: %+v, want line %d, aggregate %v, below the frame base", name, l, w.line, w.agg)
		}
	}
}
