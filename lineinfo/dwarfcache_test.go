package lineinfo

import (
	"debug/dwarf"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The DWARF Read leaves is taken once, by the same unchanged file only.
func TestHandoff(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := &dwarf.Data{}
	leave(path, d)
	if got := take(path); got != d {
		t.Fatalf("take after leave = %p, want %p", got, d)
	}
	if got := take(path); got != nil {
		t.Fatalf("a second take = %p, want nil", got)
	}
	leave(path, d)
	if got := take(path + ".other"); got != nil {
		t.Fatalf("take of another path = %p, want nil", got)
	}
	leave(path, d)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if got := take(path); got != nil {
		t.Fatalf("take of a rewritten file = %p, want nil", got)
	}
}
