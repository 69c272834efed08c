//go:build linux

package integration

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// mountTmpfs mounts a tmpfs with the mount options opts on a new directory
// and unmounts it when the test ends. It skips the test when the mount is
// refused (not root, or no CAP_SYS_ADMIN in a container).
func mountTmpfs(t *testing.T, opts string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount -t tmpfs -o %s refused (%v): %s", opts, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// readOnlyDir is a directory patchprof may not create files in: a
// read-only tmpfs for root (who ignores permission bits), else mode 0555.
func readOnlyDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() == 0 {
		return mountTmpfs(t, "ro,size=16k")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fullTmpfs is a small tmpfs filled to the last byte: creating a file there
// works, writing to it fails with ENOSPC.
func fullTmpfs(t *testing.T) string {
	t.Helper()
	dir := mountTmpfs(t, "size=64k")
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v, want ENOSPC", dir, err)
			}
			break
		}
	}
	return dir
}

// TestOutputCheckedBeforeRun: an output path patchprof could not write at
// the end is refused before the target starts: one line, exit 125, and the
// target never runs (calls.c prints its sum on stdout).
func TestOutputCheckedBeforeRun(t *testing.T) {
	needs(t)
	exe := buildC(t, "calls.c", "-g", "-O0")
	dir := t.TempDir()
	file := writeFile(t, dir, "file.txt", []byte("x\n"), 0o644)
	ro := readOnlyDir(t)
	for _, tc := range []struct {
		name string
		args []string
		want string // the message, after "patchprof: "
	}{
		{"o-missing-dir", []string{"-o", dir + "/no/r.txt"}, "-o " + dir + "/no/r.txt: directory " + dir + "/no does not exist"},
		{"o-under-file", []string{"-o", file + "/r.txt"}, "-o " + file + "/r.txt: " + file + " is not a directory"},
		{"o-directory", []string{"-o", dir}, "-o " + dir + " is a directory: give a file name"},
		{"o-read-only", []string{"-o", ro + "/r.txt"}, "-o " + ro + "/r.txt: directory " + ro + " is not writable"},
		{"save-read-only", []string{"--save", ro + "/p.json"}, "--save " + ro + "/p.json: directory " + ro + " is not writable"},
		{"save-missing-dir", []string{"--save", dir + "/no/p.json"}, "--save " + dir + "/no/p.json: directory " + dir + "/no does not exist"},
		{"save-directory", []string{"--save", dir}, "--save " + dir + " is a directory: give a file name"},
		{"gcov-file", []string{"--format", "gcov", "-o", file}, "-o " + file + " is a file: --format gcov writes one file per source into a directory"},
		{"gcov-read-only", []string{"--format", "gcov", "-o", ro + "/g/h"}, "-o " + ro + "/g/h: directory " + ro + " is not writable"},
		{"gcov-stdout", []string{"--format", "gcov", "-o", "-"}, "-o -: --format gcov writes one file per source: give a directory"},
		{"html-read-only", []string{"--format", "html", "-o", ro + "/r.html"}, "-o " + ro + "/r.html: directory " + ro + " is not writable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := run(t, runOpts{args: append(append([]string{}, tc.args...), exe)})
			if msg := oneLineError(t, res); msg != "patchprof: "+tc.want {
				t.Errorf("%s: %q, want %q", res.cmdline, msg, "patchprof: "+tc.want)
			}
			if res.stdout != "" {
				t.Errorf("%s: the target ran: stdout %q", res.cmdline, res.stdout)
			}
		})
	}
	if ents, _ := os.ReadDir(ro); len(ents) != 0 {
		t.Errorf("files appeared in the read-only %s: %v", ro, ents)
	}
}

// TestOutputDevNullUnprivileged: -o /dev/null and --save /dev/null work
// for a user who may not create files in /dev: the file is tested, not its
// directory, and written in place.
func TestOutputDevNullUnprivileged(t *testing.T) {
	needs(t)
	dir := publicDir(t)
	pp := copyExecutable(t, patchprofBin, filepath.Join(dir, "patchprof"))
	exe := copyExecutable(t, buildC(t, "calls.c", "-g", "-O0"), filepath.Join(dir, "calls"))
	stdout, stderr, code := runAsNobody(t, pp, "--funcs", "-o", "/dev/null", "--save", "/dev/null", exe)
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "sum ") {
		t.Errorf("as nobody, -o /dev/null --save /dev/null: exit %d, stdout %q, stderr %q; want 0, the target's output, nothing on stderr",
			code, stdout, stderr)
	}
}

// copyExecutable copies the executable src to dst, mode 0755.
func copyExecutable(t *testing.T, src, dst string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestOutputStdout: "-o -" is standard output, for a run, a report and a
// merge; no file named "-" appears. -o /dev/stdout, when standard output
// is a regular file, appends to the target's output instead of truncating
// it.
func TestOutputStdout(t *testing.T) {
	needs(t)
	exe := buildC(t, "calls.c", "-g", "-O0")
	dir := t.TempDir()
	res := run(t, runOpts{args: []string{"--funcs", "-o", "-", exe}, dir: dir})
	if res.code != 0 || !strings.HasPrefix(res.stdout, "sum ") || !strings.Contains(res.stdout, "\nFUNCTION CALLS") {
		t.Errorf("-o -: want the target's output, then the listing, on stdout\n%s", res)
	}
	if strings.Contains(res.stderr, "FUNCTION CALLS") {
		t.Errorf("-o -: the listing is on stderr too\n%s", res)
	}
	save := filepath.Join(dir, "p.json")
	run(t, runOpts{args: []string{"--funcs", "--save", save, exe}, dir: dir})
	rep := run(t, runOpts{args: []string{"report", "-o", "-", save}, dir: dir})
	if rep.code != 0 || !strings.Contains(rep.stdout, "FUNCTION CALLS") {
		t.Errorf("report -o -: want the listing on stdout\n%s", rep)
	}
	merged := run(t, runOpts{args: []string{"merge", "-o", "-", save, save}, dir: dir})
	if merged.code != 0 || !strings.HasPrefix(merged.stdout, "{\n") || !strings.Contains(merged.stdout, `"version": 3`) {
		t.Errorf("merge -o -: want the merged profile on stdout\n%s", merged)
	}
	if _, err := os.Stat(filepath.Join(dir, "-")); err == nil {
		t.Errorf("a file named - appeared in %s", dir)
	}

	// Standard output a regular file: the shell's `> out.txt`.
	out := filepath.Join(dir, "out.txt")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(patchprofBin, "--funcs", "-o", "/dev/stdout", exe)
	cmd.Stdout = f
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	f.Close()
	if err != nil {
		t.Fatalf("patchprof -o /dev/stdout > out.txt: %v\n%s", err, stderr.String())
	}
	b, _ := os.ReadFile(out)
	if !strings.HasPrefix(string(b), "sum ") || !strings.Contains(string(b), "\nFUNCTION CALLS") {
		t.Errorf("-o /dev/stdout > out.txt: want the target's output, then the listing; out.txt:\n%s", b)
	}
}

// TestRootCwdPaths: run from /, the listing names files by their absolute
// paths, not as tmp/..., which reads as relative.
func TestRootCwdPaths(t *testing.T) {
	needs(t)
	exe := buildC(t, "calls.c", "-g", "-O0")
	src := filepath.Join(testdataDir, "calls.c")
	res := run(t, runOpts{args: []string{"--lines", "--funcs", exe}, dir: "/"})
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res)
	}
	if !strings.Contains(res.stderr, "\n"+src+" ") || !strings.Contains(res.stderr, " "+src+":") {
		t.Errorf("listing from / lacks %s in the FILE column and the function table\n%s", src, tail(res.stderr))
	}
	if rel := strings.TrimPrefix(src, "/"); strings.Contains(res.stderr, "\n"+rel) || strings.Contains(res.stderr, " "+rel+":") {
		t.Errorf("listing from / names %s without its leading slash\n%s", src, tail(res.stderr))
	}
}

// asideRE matches the one line patchprof prints when a write failed and
// the output went to a temporary file instead.
var asideRE = regexp.MustCompile(`^patchprof: cannot write (the report|the profile|the \.gcov files) to (\S+) \(no space left on device\): it is in (\S+)\n$`)

// TestOutputDiskFull: when a write fails at the end of the run (a full
// disk), the report or profile goes to a temporary file in $TMPDIR, one
// line names it, no truncated or empty file stays at the path asked for,
// and patchprof exits 125, not with the target's status.
func TestOutputDiskFull(t *testing.T) {
	needs(t)
	exe := buildC(t, "calls.c", "-g", "-O0")
	full := fullTmpfs(t)
	saved := filepath.Join(t.TempDir(), "p.json")
	if res := run(t, runOpts{args: []string{"--funcs", "--save", saved, exe}}); res.code != 0 {
		t.Fatalf("saving a profile: %s", res)
	}
	for _, tc := range []struct {
		name, out string // the path asked for, in the full tmpfs
		args      []string
		check     func(t *testing.T, aside string)
	}{
		{"listing", "r.txt", []string{"--funcs", "-o"}, wantContent("FUNCTION CALLS")},
		{"save", "p.json", []string{"--funcs", "--save"}, func(t *testing.T, aside string) {
			if _, err := readProfile(aside); err != nil {
				t.Error(err)
			}
		}},
		{"html", "r.html", []string{"--funcs", "--format", "html", "-o"}, wantContent("</html>")},
		{"gcov", "g", []string{"--lines", "--format", "gcov", "-o"}, func(t *testing.T, aside string) {
			wantContent("MAIN_CALL_WORK")(t, filepath.Join(aside, "calls.c.gcov"))
		}},
		{"report", "r2.txt", []string{"report", "-o"}, wantContent("FUNCTION CALLS")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			path := filepath.Join(full, tc.out)
			args := append(append([]string{}, tc.args...), path)
			if tc.name == "report" {
				args = append(args, saved)
			} else {
				args = append(args, exe)
			}
			res := run(t, runOpts{args: args, env: []string{"TMPDIR=" + tmp}})
			if res.code != exitFailure {
				t.Errorf("exit %d, want 125\n%s", res.code, res)
			}
			if tc.name != "report" && !strings.HasPrefix(res.stdout, "sum ") {
				t.Errorf("the target did not run\n%s", res)
			}
			last := res.stderr[strings.LastIndex(strings.TrimSuffix(res.stderr, "\n"), "\n")+1:]
			m := asideRE.FindStringSubmatch(last)
			if m == nil || m[2] != path || filepath.Dir(m[3]) != tmp {
				t.Fatalf("last line %q, want `patchprof: cannot write ... to %s (no space left on device): it is in %s/...`\n%s", last, path, tmp, res)
			}
			tc.check(t, m[3])
			if st, err := os.Stat(path); err == nil && !st.IsDir() {
				t.Errorf("%s was left behind (%d bytes)", path, st.Size())
			}
		})
	}
}

// wantContent checks that the file at path holds want.
func wantContent(want string) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q:\n%s", path, want, tail(string(b)))
		}
	}
}
