//go:build unix

package profile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestLoadNotRegular checks that Load refuses a directory, a device and a
// FIFO at once, with one line naming the path and what it is: reading
// /dev/zero used to end in Go's fatal out-of-memory, and a FIFO blocked.
func TestLoadNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	for _, tc := range []struct{ path, what string }{
		{dir, "a directory"},
		{"/dev/zero", "a character device"},
		{fifo, "a FIFO"},
	} {
		done := make(chan error, 1)
		go func() {
			_, err := Load(tc.path)
			done <- err
		}()
		select {
		case err := <-done:
			want := tc.path + " is " + tc.what + ", not a regular file: give the path of a profile saved with --save"
			if !errors.Is(err, ErrNotRegular) || err == nil || err.Error() != want {
				t.Errorf("Load(%s) = %v, want %q", tc.path, err, want)
			}
		case <-time.After(2 * time.Minute): // only a hang
			t.Fatalf("Load(%s) blocks", tc.path)
		}
	}
}

// TestLoadSparse checks that Load, which has no size limit since it reads
// a profile as a stream, refuses a large file that is not a profile at its
// first byte, without reading the rest (the file is sparse: it costs no
// disk).
func TestLoadSparse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 40); err != nil {
		t.Skipf("cannot make a sparse file of 1 TiB here: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	want := path + `: not a patchprof profile: not JSON at offset 1: invalid character '\x00' looking for beginning of value`
	if err == nil || err.Error() != want {
		t.Errorf("Load(1 TiB of zeros) = %v, want %q", err, want)
	}
}
