package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckOutput: the checks made before the target runs, by kind of
// output; "" is no error.
func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		kind outKind
		want string
	}{
		{"", outReplace, ""},
		{"-", outReplace, ""},
		{"/dev/stdout", outReplace, ""},
		{"-", outDir, "-o -: --format gcov writes one file per source: give a directory"},
		{file, outReplace, ""},
		{filepath.Join(dir, "new.txt"), outReplace, ""},
		{dir, outReplace, "-o " + dir + " is a directory: give a file name"},
		{dir, outDir, ""},
		{filepath.Join(dir, "a", "b"), outDir, ""},
		{file, outDir, "-o " + file + " is a file: --format gcov writes one file per source into a directory"},
		{filepath.Join(file, "g"), outDir, "-o " + file + "/g: " + file + " is not a directory"},
		{filepath.Join(dir, "no", "r.txt"), outReplace, "-o " + dir + "/no/r.txt: directory " + dir + "/no does not exist"},
		{filepath.Join(file, "r.txt"), outReplace, "-o " + file + "/r.txt: " + file + " is not a directory"},
		{filepath.Join(file, "x", "r.txt"), outReplace, "-o " + file + "/x/r.txt: " + file + " is not a directory"},
		{os.DevNull, outReplace, ""},
	} {
		err := checkOutput("-o", tc.path, tc.kind)
		got := ""
		if err != nil {
			got = err.Error()
			if statusOf(err) != exitFailure {
				t.Errorf("checkOutput(%q, %d): status %d, want %d", tc.path, tc.kind, statusOf(err), exitFailure)
			}
		}
		if got != tc.want {
			t.Errorf("checkOutput(%q, %d) = %q, want %q", tc.path, tc.kind, got, tc.want)
		}
	}
}

// failAfter is a writer that takes n bytes and then fails.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestChunkBuffer(t *testing.T) {
	var want bytes.Buffer
	var b chunkBuffer
	// Writes of odd sizes cross the pieces' bounds at every offset.
	for i := 0; want.Len() < 3*chunkSize+12345; i++ {
		p := bytes.Repeat([]byte{byte('a' + i%26)}, 1+i*7919%70001)
		want.Write(p)
		if n, err := b.Write(p); n != len(p) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	for _, c := range b.full {
		if len(c) != chunkSize {
			t.Fatalf("a full piece holds %d bytes, want %d", len(c), chunkSize)
		}
	}
	var got bytes.Buffer
	if n, err := b.WriteTo(&got); err != nil || n != int64(want.Len()) || !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("WriteTo = %d, %v; bytes equal: %v", n, err, bytes.Equal(got.Bytes(), want.Bytes()))
	}
	fw := &failAfter{n: chunkSize + 10}
	if n, err := b.WriteTo(fw); err == nil || n != chunkSize+10 {
		t.Fatalf("WriteTo a failing writer = %d, %v; want %d and its error", n, err, chunkSize+10)
	}
	b.Reset()
	if n, _ := b.WriteTo(io.Discard); n != 0 {
		t.Fatalf("after Reset, WriteTo wrote %d bytes", n)
	}
	b.Write([]byte("again"))
	got.Reset()
	b.WriteTo(&got)
	if got.String() != "again" {
		t.Fatalf("after Reset, WriteTo wrote %q", got.String())
	}
}
