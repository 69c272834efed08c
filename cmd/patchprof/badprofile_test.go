//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReportBadFiles: `patchprof report` on a device, a FIFO, a directory or
// a crafted profile prints one line and fails, promptly (issue 12: report
// /dev/zero died of Go's fatal out-of-memory, report FIFO blocked).
func TestReportBadFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	write := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const good = `{"version":2,"executable":"/x","args":[],"mode":"lines","exit":{"code":0},"lines":[],"functions":[],"sites":[]}`
	array := write("array.json", "[]")
	exit300 := write("exit300.json", strings.Replace(good, `"code":0`, `"code":300`, 1))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "/dev/zero"}, "patchprof: /dev/zero is a character device, not a regular file: give the path of a profile saved with --save\n"},
		{[]string{"report", fifo}, "patchprof: " + fifo + " is a FIFO, not a regular file: give the path of a profile saved with --save\n"},
		{[]string{"report", dir}, "patchprof: " + dir + " is a directory, not a regular file: give the path of a profile saved with --save\n"},
		{[]string{"merge", "-o", filepath.Join(dir, "m.json"), "/dev/zero"}, "patchprof: /dev/zero is a character device, not a regular file: give the path of a profile saved with --save\n"},
		{[]string{"report", array}, "patchprof: " + array + ": not a patchprof profile: the document is a list, not an object\n"},
		{[]string{"report", exit300}, "patchprof: " + exit300 + ": bad profile: exit.code: 300: want 0 to 255\n"},
	} {
		var b strings.Builder
		done := make(chan int, 1)
		go func() { done <- Main(tc.args, &b) }()
		select {
		case code := <-done:
			if code == 0 || b.String() != tc.want {
				t.Errorf("Main(%q) = %d, printed %q; want a failure printing %q", tc.args, code, b.String(), tc.want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("Main(%q) blocks", tc.args)
		}
	}
}
