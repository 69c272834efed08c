package output

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// coverageRun is the common start of the tests that hold an export to what
// gcov or gcovr write: it copies testdata/gcov/prog.c into a temporary
// directory, builds it there with gcc --coverage -O0 (compiled and linked
// apart, so the notes file is prog.gcno whatever the gcc version's naming of
// auxiliary files) and runs it once. It returns the directory and a function
// that runs a command in it and returns its standard output, failing the
// test if the command fails. It skips the test when gcc or gcov is missing.
func coverageRun(t *testing.T) (work string, run func(name string, args ...string) string) {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not in PATH (Debian package gcc): cannot build a program for gcov")
	}
	if _, err := exec.LookPath("gcov"); err != nil {
		t.Skip("gcov not in PATH (Debian package gcc): it is the oracle for the exports' counts")
	}
	work = t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "gcov", "prog.c"))
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(work, "prog.c")
	if err := os.WriteFile(prog, src, 0o644); err != nil {
		t.Fatal(err)
	}
	run = func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = work
		out, err := cmd.Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("%v: %v\n%s%s", cmd, err, out, stderr)
		}
		return string(out)
	}
	run(gcc, "--coverage", "-O0", "-c", "-o", "prog.o", prog)
	run(gcc, "--coverage", "-o", "prog", "prog.o")
	run(filepath.Join(work, "prog"))
	return work, run
}
