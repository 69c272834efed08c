//go:build linux

package main

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
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
		case <-time.After(2 * time.Minute): // only a hang
			t.Fatalf("Main(%q) blocks", tc.args)
		}
	}
}

// TestReportHugeLineCLI: `report --format gcov -o D` on a profile counting
// line 10^9 of a missing source writes one small file (it wrote 2.3 GB).
func TestReportHugeLineCLI(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "gone.c")
	prof := filepath.Join(dir, "p.json")
	data := `{"version":2,"executable":"/x","args":["/x"],"mode":"lines","exit":{"code":0},` +
		`"lines":[{"file":"` + src + `","line":1000000000,"count":5}],"functions":[],"sites":[]}`
	if err := os.WriteFile(prof, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "gcov")
	var b strings.Builder
	if code := Main([]string{"report", "--format", "gcov", "-o", out, prof}, &b); code != 0 {
		t.Fatalf("report = %d: %s", code, b.String())
	}
	got, err := os.ReadFile(filepath.Join(out, "gone.c.gcov"))
	if err != nil {
		t.Fatal(err)
	}
	want := "        -:    0:Source:" + src + "\n        -:    0:Graph:\n        -:    0:Data:\n        -:    0:Runs:1\n        5:1000000000:/*EOF*/\n"
	if string(got) != want {
		t.Errorf("gone.c.gcov:\n%s\nwant\n%s", got, want)
	}
}

// TestMergeOverflowCLI: `patchprof merge` of counts summing past 2^64-1
// saves 2^64-1 and a note, not the wrapped-around 31.
func TestMergeOverflowCLI(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n uint64) string {
		path := filepath.Join(dir, name)
		data := `{"version":2,"executable":"/x","args":["/x"],"mode":"lines","exit":{"code":0},` +
			`"lines":[{"file":"/x.c","line":3,"count":` + strconv.FormatUint(n, 10) + `}],"functions":[],"sites":[]}`
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a, b := write("a.json", math.MaxUint64), write("b.json", 32)
	out := filepath.Join(dir, "m.json")
	var msg strings.Builder
	if code := Main([]string{"merge", "-o", out, a, b}, &msg); code != 0 {
		t.Fatalf("merge = %d: %s", code, msg.String())
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"count": 18446744073709551615`, `"1 merged count passed 2^64-1 and was capped at 18446744073709551615: it is a lower bound"`} {
		if !strings.Contains(string(got), want) {
			t.Errorf("merged profile lacks %s:\n%s", want, got)
		}
	}
}
