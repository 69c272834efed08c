package profiler

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestGoStdName(t *testing.T) {
	for name, want := range map[string]bool{
		"runtime.mallocgc":             true,
		"runtime.asyncPreempt2.abi0":   true,
		"sync/atomic.StoreUintptr":     true,
		"internal/poll.init":           true,
		"type:.eq.main.T":              true,
		"go:buildid":                   true,
		"main.main":                    false,
		"main.main.func1":              false,
		"example.com/m/pkg.Do":         false,
		"github.com/a/b.(*T).M":        false,
		"golang.org/x/sys/unix.Pwrite": false,
	} {
		if got := goStdName(name); got != want {
			t.Errorf("goStdName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestIsSystem(t *testing.T) {
	for path, want := range map[string]bool{
		"/usr/bin/sh":                       true,
		"/lib/x86_64-linux-gnu/libc.so.6":   true,
		"/usr/lib/x86_64-linux-gnu/libm.so": true,
		"/home/ann/prog":                    false,
		"/usr/local/bin/tool":               false,
	} {
		if got := isSystem(path); got != want {
			t.Errorf("isSystem(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestMatchLib(t *testing.T) {
	s := &selection{libs: []string{"libfoo*", "/opt/*/libbar.so"}}
	for path, want := range map[string]bool{
		"/usr/lib/libfoo.so.1": true,
		"/opt/x/libbar.so":     true,
		"/opt/x/y/libbar.so":   false,
		"/usr/lib/libbaz.so":   false,
	} {
		if got := s.matchLib(path); got != want {
			t.Errorf("matchLib(%q) = %v, want %v", path, got, want)
		}
	}
}

// buildC compiles a small C program with gcc and flags into a temporary
// directory, skipping when gcc is missing.
func buildC(t *testing.T, src string, flags ...string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "p.c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "p")
	args := append(append([]string{}, flags...), "-o", exe, c)
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, out)
	}
	return exe
}

const prog = `
static int twice(int x) { return 2 * x; }
int main(void)
{
	int s = 0;
	for (int i = 0; i < 10; i++)
		s += twice(i);
	return s == 90 ? 0 : 1;
}
`

// TestOpen plans without running anything: what is planted, and the
// mistakes a user can make, each a one-line *UserError.
func TestOpen(t *testing.T) {
	withLines := buildC(t, prog, "-g", "-O0")
	p, err := Open(Config{Lines: true, Funcs: true}, Target{Path: withLines, Name: "./p"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Sites() == 0 {
		t.Errorf("no sites planned in %s", withLines)
	}
	mods := p.Modules()
	if len(mods) != 1 || mods[0].Name != "" || mods[0].Plan == nil || mods[0].Lines == nil {
		t.Errorf("Modules() = %+v, want the executable with its plan and lines", mods)
	}
	if err := p.Close(); err != nil {
		t.Error(err)
	}

	noLines := buildC(t, prog, "-O0", "-static")
	notELF := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		cfg  Config
		path string
		want string
	}{
		{Config{Lines: true}, noLines, "no DWARF line information"},
		{Config{Lines: true}, notELF, "not an ELF executable"},
		{Config{Funcs: true, FuncFilter: func(string) bool { return false }}, noLines, "nothing to count"},
	} {
		p, err := Open(tc.cfg, Target{Path: tc.path, Name: tc.path})
		var ue *UserError
		if err == nil {
			p.Close()
			t.Errorf("Open(%s) succeeded, want an error containing %q", tc.path, tc.want)
			continue
		}
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%s) = %v, want a one-line *UserError containing %q", tc.path, err, tc.want)
		}
	}
}
