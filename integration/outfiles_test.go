//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestOutFilesDiskFullKeepsOld: on a full disk, every command that writes
// a file over an old one (-o of a run and of report, --save, merge -o, the
// .gcov files) leaves the old file as it was and no temporary file beside
// it: the new output is written beside the old file and renamed over it
// only once complete (issue 24). The output itself goes to $TMPDIR, as
// TestOutputDiskFull checks.
func TestOutFilesDiskFullKeepsOld(t *testing.T) {
	needs(t)
	exe := buildC(t, "calls.c", "-g", "-O0")
	saved := filepath.Join(t.TempDir(), "p.json")
	if res := run(t, runOpts{args: []string{"--funcs", "--save", saved, exe}}); res.code != 0 {
		t.Fatalf("saving a profile: %s", res)
	}
	full := fullTmpfs(t)
	if err := os.Mkdir(filepath.Join(full, "g"), 0o755); err != nil {
		t.Fatal(err)
	}
	olds := []string{"r.txt", "r2.txt", "p.json", "m.json", "g/calls.c.gcov"}
	// Room for the old files, a page each, and not a byte more.
	filler := filepath.Join(full, "filler")
	st, err := os.Stat(filler)
	if err != nil {
		t.Fatal(err)
	}
	page := int64(os.Getpagesize())
	if err := os.Truncate(filler, st.Size()-int64(len(olds))*page); err != nil {
		t.Fatal(err)
	}
	for _, name := range olds {
		writeFile(t, full, name, []byte("the old "+name+"\n"), 0o644)
	}
	for _, tc := range []struct {
		name, out string
		args      []string // the path asked for, then the program or profiles, follow
		inputs    []string
	}{
		{"run-o", "r.txt", []string{"--funcs", "-o"}, []string{exe}},
		{"save", "p.json", []string{"--funcs", "--save"}, []string{exe}},
		{"report-o", "r2.txt", []string{"report", "-o"}, []string{saved}},
		{"merge-o", "m.json", []string{"merge", "-o"}, []string{saved, saved}},
		{"gcov", "g", []string{"--lines", "--format", "gcov", "-o"}, []string{exe}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			path := filepath.Join(full, tc.out)
			args := append(append(append([]string{}, tc.args...), path), tc.inputs...)
			res := run(t, runOpts{args: args, env: []string{"TMPDIR=" + tmp}})
			if res.code != exitFailure {
				t.Errorf("exit %d, want 125\n%s", res.code, res)
			}
			last := res.stderr[strings.LastIndex(strings.TrimSuffix(res.stderr, "\n"), "\n")+1:]
			if m := asideRE.FindStringSubmatch(last); m == nil || filepath.Dir(m[3]) != tmp {
				t.Errorf("last line %q, want `patchprof: cannot write ... (no space left on device): it is in %s/...`\n%s", last, tmp, res)
			}
		})
	}
	for _, name := range olds {
		b, err := os.ReadFile(filepath.Join(full, name))
		if want := "the old " + name + "\n"; err != nil || string(b) != want {
			t.Errorf("%s holds %q, %v after the failed writes; want %q", name, b, err, want)
		}
	}
	for _, dir := range []string{full, filepath.Join(full, "g")} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			rel, _ := filepath.Rel(full, filepath.Join(dir, e.Name()))
			if !slices.Contains(olds, rel) && rel != "filler" && rel != "g" {
				t.Errorf("%s was left behind in %s", rel, full)
			}
		}
	}
}

// TestOutFilesMergeReadBack: what merge writes, report and merge read
// back; the counts add up. Both read profiles as streams, with no size
// limit merge could pass (issue 24: two 114 MiB profiles merged into one
// report refused).
func TestOutFilesMergeReadBack(t *testing.T) {
	needs(t)
	exe := buildC(t, "calls.c", "-g", "-O0")
	dir := t.TempDir()
	one := filepath.Join(dir, "one.json")
	if res := run(t, runOpts{args: []string{"--funcs", "--save", one, exe}}); res.code != 0 {
		t.Fatalf("saving a profile: %s", res)
	}
	p1, err := readProfile(one)
	if err != nil {
		t.Fatal(err)
	}
	calls, ok := funcCount(p1, "work")
	if !ok || calls == 0 {
		t.Fatalf("%s: work() not counted", one)
	}
	two := filepath.Join(dir, "two.json")
	four := filepath.Join(dir, "four.json")
	for _, args := range [][]string{{"merge", "-o", two, one, one}, {"merge", "-o", four, two, two}} {
		if res := run(t, runOpts{args: args}); res.code != 0 || res.stderr != "" {
			t.Fatalf("%s", res)
		}
	}
	p4, err := readProfile(four)
	if err != nil {
		t.Fatal(err)
	}
	wantFunc(t, p4, "work", 4*calls)
	res := run(t, runOpts{args: []string{"report", four}})
	if res.code != 0 || !strings.Contains(res.stdout, "FUNCTION CALLS") {
		t.Errorf("report of the merged profile: %s", res)
	}
}

// TestOutFilesNotRegular: a --listen-token FILE, a profile given to report
// or merge, that is a FIFO, a device or a directory is refused at once
// with one line saying what it is, before anything runs; so is a token
// file larger than 4 KiB. A FIFO used to block patchprof before the target
// started, /dev/zero to grow its memory until it was killed (issue 24).
// A test that blocks fails at run's timeout.
func TestOutFilesNotRegular(t *testing.T) {
	needs(t)
	exe := buildC(t, "calls.c", "-g", "-O0")
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := writeFile(t, dir, "big.token", []byte(strings.Repeat("x", 5000)), 0o600)
	listen := func(token string) []string {
		return []string{"--listen", "127.0.0.1:0", "--listen-token", token, exe}
	}
	for _, tc := range []struct {
		name   string
		args   []string
		status int
		want   string // in the message
	}{
		{"token-fifo", listen(fifo), exitFailure, "--listen-token " + fifo + ": not a regular file (a FIFO): give a regular file holding the token"},
		{"token-zero", listen("/dev/zero"), exitFailure, "--listen-token /dev/zero: not a regular file (a character device)"},
		{"token-dir", listen(dir), exitFailure, "--listen-token " + dir + ": not a regular file (a directory)"},
		{"token-big", listen(big), exitFailure, "--listen-token " + big + ": larger than 4 KiB"},
		{"report-fifo", []string{"report", fifo}, exitFailure, fifo + " is a FIFO, not a regular file: give the path of a profile saved with --save"},
		{"report-zero", []string{"report", "/dev/zero"}, exitFailure, "/dev/zero is a character device, not a regular file"},
		{"merge-fifo", []string{"merge", "-o", filepath.Join(dir, "m.json"), fifo}, exitFailure, fifo + " is a FIFO"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, runOpts{args: tc.args})
			msg := oneLineErrorStatus(t, res, tc.status)
			if !strings.Contains(msg, tc.want) {
				t.Errorf("%s: %q, want it to hold %q", res.cmdline, msg, tc.want)
			}
			if res.stdout != "" {
				t.Errorf("%s: the target ran: stdout %q", res.cmdline, res.stdout)
			}
		})
	}
}
