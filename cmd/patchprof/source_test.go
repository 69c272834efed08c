//go:build unix

package main

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReadRegular: only regular files up to the limit are read; a FIFO
// (which would block), a device (endless) and a directory are refused at
// once, and so is a file over the limit.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.c")
	os.WriteFile(small, []byte("int x;\n"), 0o644)
	fifo := filepath.Join(dir, "fifo.c")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.c")
	os.Symlink("/dev/zero", zero)
	for _, tc := range []struct {
		name string
		max  int64
		want error // nil: read
	}{
		{small, 7, nil},
		{small, 6, errTooLarge},
		{fifo, 1 << 20, errNotRegular},
		{zero, 1 << 20, errNotRegular},
		{dir, 1 << 20, errNotRegular},
		{filepath.Join(dir, "missing.c"), 1 << 20, os.ErrNotExist},
	} {
		data, err := readRegular(tc.name, tc.max)
		if tc.want == nil && (err != nil || string(data) != "int x;\n") {
			t.Errorf("readRegular(%s, %d) = %q, %v; want its text", tc.name, tc.max, data, err)
		}
		if tc.want != nil && !errors.Is(err, tc.want) {
			t.Errorf("readRegular(%s, %d): error %v, want %v", tc.name, tc.max, err, tc.want)
		}
	}
	s := newSourceFiles()
	s.ReadFile(fifo)
	s.ReadFile(fifo)
	s.ReadFile(small)
	if got := s.notes(); len(got) != 1 || got[0] != "source "+fifo+" is not a regular file (a FIFO): not read" {
		t.Errorf("notes %q, want one for the FIFO", got)
	}
}
