//go:build linux

package integration

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// elfHeader is a minimal ELF header (64 bytes, no program or section
// headers) of the given class and machine: enough to be recognised as ELF
// and refused as not x86-64.
func elfHeader(class elf.Class, machine elf.Machine) []byte {
	b := make([]byte, 64)
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS] = byte(class)
	b[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	b[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	le := binary.LittleEndian
	le.PutUint16(b[16:], uint16(elf.ET_EXEC))
	le.PutUint16(b[18:], uint16(machine))
	le.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	if class == elf.ELFCLASS32 {
		le.PutUint32(b[24:], 0x8048000) // e_entry
		le.PutUint16(b[40:], 52)        // e_ehsize
		le.PutUint16(b[42:], 32)        // e_phentsize
		le.PutUint16(b[46:], 40)        // e_shentsize
	} else {
		le.PutUint64(b[24:], 0x400000) // e_entry
		le.PutUint16(b[52:], 64)       // e_ehsize
		le.PutUint16(b[54:], 56)       // e_phentsize
		le.PutUint16(b[58:], 64)       // e_shentsize
	}
	return b
}

// writeFile writes a file into dir with the given mode and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBadProgram checks patchprof's refusals of programs it cannot run or
// profile: one line on stderr starting "patchprof: ", naming the
// program, and saying what to do where it can; exit 127 for a program not
// found, 126 for one that cannot be run, 125 for one patchprof cannot
// profile.
func TestBadProgram(t *testing.T) {
	needs(t)
	dir := t.TempDir()
	exe := buildC(t, "calls.c", "-g", "-O0")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	noExec := writeFile(t, dir, "noexec", b, 0o644)
	notELF := writeFile(t, dir, "notelf", []byte("this is not an ELF file\n"), 0o755)
	elf32 := writeFile(t, dir, "elf32", elfHeader(elf.ELFCLASS32, elf.EM_386), 0o755)
	arm64 := writeFile(t, dir, "arm64", elfHeader(elf.ELFCLASS64, elf.EM_AARCH64), 0o755)
	noDebug := buildC(t, "calls.c", "-O0")
	stripped := buildC(t, "calls.c", "-O0", "-static", "-s")
	missing := filepath.Join(dir, "does-not-exist")

	for _, tc := range []struct {
		name string
		args []string
		prog string   // the program the message must name
		want []string // substrings the message must hold
		code int      // the exit status
	}{
		{"missing", []string{missing}, missing, nil, exitNotFound},
		{"not-executable", []string{"--funcs", noExec}, noExec, nil, exitCannotRun},
		{"not-elf", []string{notELF}, notELF, nil, exitCannotRun},
		{"elf32", []string{"--funcs", elf32}, elf32, nil, exitCannotRun},
		{"arm64", []string{"--funcs", arm64}, arm64, nil, exitCannotRun},
		{"lines-no-debug", []string{"--lines", noDebug}, noDebug, []string{"-g", "--funcs"}, exitFailure},
		{"default-no-debug", []string{noDebug}, noDebug, []string{"-g", "--funcs"}, exitFailure},
		{"funcs-no-symbols", []string{"--funcs", stripped}, stripped, []string{"symbol"}, exitFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := run(t, runOpts{args: tc.args})
			msg := oneLineErrorStatus(t, res, tc.code)
			if !strings.Contains(msg, tc.prog) && !strings.Contains(msg, filepath.Base(tc.prog)) {
				t.Errorf("%s: message %q does not name the program", res.cmdline, msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(strings.ToLower(msg), strings.ToLower(w)) {
					t.Errorf("%s: message %q does not mention %q", res.cmdline, msg, w)
				}
			}
			if res.stdout != "" {
				t.Errorf("%s: stdout %q, want nothing", res.cmdline, res.stdout)
			}
		})
	}
}

// TestFIFOProgram: a program path naming a FIFO marked executable is
// refused at once from its mode, with 126 and one line, never opened:
// opening it to read would wait for a writer that never comes.
func TestFIFOProgram(t *testing.T) {
	mustHaveCLI(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	res := run(t, runOpts{args: []string{"--funcs", fifo}, timeout: eventBound})
	msg := oneLineErrorStatus(t, res, exitCannotRun)
	if want := "patchprof: " + fifo + " is not a regular file (a FIFO): give the program's path"; msg != want {
		t.Errorf("%s: message %q, want %q", res.cmdline, msg, want)
	}
}

// TestBadArguments checks patchprof's refusals of its own arguments: exit 125
// and one line on stderr starting "patchprof: " (no usage dump).
func TestBadArguments(t *testing.T) {
	mustHaveCLI(t)
	mustHaveCC(t)
	exe := buildC(t, "calls.c", "-g", "-O0")
	dir := t.TempDir()
	notJSON := writeFile(t, dir, "notjson.json", []byte("this is not JSON\n"), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string // a substring the message must hold ("" = any)
	}{
		{"unknown-flag", []string{"--bogus", exe}, "bogus"},
		{"print-bogus", []string{"--print", "bogus", exe}, "bogus"},
		{"save-no-value", []string{"--save"}, "save"},
		{"no-program", nil, ""},
		{"bad-regexp", []string{"--func", "(", exe}, ""},
		{"bad-subst-path", []string{"--subst-path", "nosign", exe}, ""},
		{"report-missing", []string{"report", filepath.Join(dir, "missing.json")}, "missing.json"},
		{"report-not-json", []string{"report", notJSON}, "notjson.json"},
		{"report-no-file", []string{"report"}, ""},
		{"report-print-bogus", []string{"report", "--print", "bogus", notJSON}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := run(t, runOpts{args: tc.args})
			msg := oneLineError(t, res)
			if tc.want != "" && !strings.Contains(msg, tc.want) {
				t.Errorf("%s: message %q does not mention %q", res.cmdline, msg, tc.want)
			}
			if res.stdout != "" {
				t.Errorf("%s: stdout %q, want nothing", res.cmdline, res.stdout)
			}
		})
	}
}
