package main

import (
	"slices"
	"testing"
)

// TestWatchChildArgs: the counting flags given to watch reach each child
// patchprof as given, in order.
func TestWatchChildArgs(t *testing.T) {
	wf, _, err := parseWatchFlags([]string{"--exe", "/bin/true", "--save", t.TempDir() + "/a.json",
		"--funcs", "--func", "^work$", "--engine=xol", "--lib", "libz*", "--lib", "libc*"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--funcs=true", "--func=^work$", "--engine=xol", "--lib=libz*", "--lib=libc*"}
	if !slices.Equal(wf.child, want) {
		t.Errorf("child flags %q, want %q", wf.child, want)
	}
}

func TestFileKey(t *testing.T) {
	for key, want := range map[string]string{
		"1678b597233c0fd23e60a6be462f1c06242f2d15": "1678b597233c0fd2",
		"/srv/api/server":                          "server",
	} {
		if got := fileKey(key); got != want {
			t.Errorf("fileKey(%q) = %q, want %q", key, got, want)
		}
	}
}
