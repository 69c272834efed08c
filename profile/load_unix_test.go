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
		case <-time.After(10 * time.Second):
			t.Fatalf("Load(%s) blocks", tc.path)
		}
	}
}

// TestLoadTooLarge checks that Load refuses a file larger than MaxSize
// without reading it (the file is sparse: it costs no disk).
func TestLoadTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxSize + 1); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	want := path + ": too large for a patchprof profile: 256 MiB or more, and profiles are at most 256 MiB: is it a profile saved with --save?"
	if !errors.Is(err, ErrTooLarge) || err.Error() != want {
		t.Errorf("Load(%d bytes) = %v, want %q", MaxSize+1, err, want)
	}
}
