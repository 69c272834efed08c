package mapfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func writeFile(t *testing.T, n int) (string, []byte) {
	t.Helper()
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7 + i>>8)
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// TestReadAt: reads at any offset and length give the file's bytes, with
// io.ReaderAt's end-of-file rule.
func TestReadAt(t *testing.T) {
	path, want := writeFile(t, 3*4096+123)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.Size() != int64(len(want)) {
		t.Fatalf("Size %d, want %d", f.Size(), len(want))
	}
	for _, c := range []struct {
		off, n, got int
		eof         bool
	}{
		{0, 16, 16, false}, {4090, 100, 100, false}, {int(f.Size()) - 10, 10, 10, false},
		{int(f.Size()) - 10, 20, 10, true}, {int(f.Size()), 1, 0, true}, {int(f.Size()) + 5, 1, 0, true},
	} {
		buf := make([]byte, c.n)
		n, err := f.ReadAt(buf, int64(c.off))
		if n != c.got || (err == io.EOF) != c.eof || (err != nil && err != io.EOF) {
			t.Errorf("ReadAt(%d bytes at %d) = %d, %v; want %d, eof %v", c.n, c.off, n, err, c.got, c.eof)
			continue
		}
		if n > 0 && !bytes.Equal(buf[:n], want[c.off:c.off+n]) {
			t.Errorf("ReadAt(%d bytes at %d): other bytes", c.n, c.off)
		}
	}
	if _, err := f.ReadAt(make([]byte, 1), -1); err == nil {
		t.Error("a negative offset read")
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o644)
	if e, err := Open(empty); err != nil || e.Size() != 0 {
		t.Errorf("empty file: %v, %v", e, err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// TestCutShort: a file truncated after it was mapped faults at a read
// past its new end; the read returns a FaultError and patchprof goes on.
func TestCutShort(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the mapping is Linux's here")
	}
	path, want := writeFile(t, 16*4096)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, err := f.ReadAt(buf, 8*4096)
	var fe *FaultError
	if !errors.As(err, &fe) || n != 0 {
		t.Fatalf("read past the new end: %d, %v; want a FaultError", n, err)
	}
	if n, err := f.ReadAt(buf, 100); err != nil || n != len(buf) || !bytes.Equal(buf, want[100:164]) {
		t.Errorf("read before the new end: %d, %v", n, err)
	}
}
