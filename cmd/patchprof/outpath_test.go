package main

import (
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
