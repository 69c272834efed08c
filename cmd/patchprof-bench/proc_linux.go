package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

// procCode is what a detach must leave as it was in a process: its
// executable mappings, as /proc/PID/maps lists them.
func procCode(pid int) (lines []string, ms []Mapping, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return nil, nil, err
	}
	return codeMappings(string(b))
}

// tracerPID is the TracerPid of a process's status: 0 when no tracer is
// attached.
func tracerPID(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "TracerPid:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("/proc/%d/status has no TracerPid", pid)
}

// codeAsFiles checks that the code of every file mapped executable in a
// process is the bytes of its file, read through /proc/PID/mem: no
// breakpoint or jump of patchprof's left behind.
func codeAsFiles(pid int, ms []Mapping) error {
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return err
	}
	defer mem.Close()
	for _, m := range ms {
		if !strings.HasPrefix(m.Path, "/") {
			continue // anonymous, [vdso], [vsyscall]
		}
		file, err := os.ReadFile(m.Path)
		if err != nil {
			return err
		}
		if m.Offset >= uint64(len(file)) {
			continue
		}
		n := min(m.Hi-m.Lo, uint64(len(file))-m.Offset)
		got := make([]byte, n)
		if _, err := mem.ReadAt(got, int64(m.Lo)); err != nil {
			return fmt.Errorf("reading the code at %#x: %w", m.Lo, err)
		}
		want := file[m.Offset : m.Offset+n]
		if k := firstDiff(got, want); k >= 0 {
			return fmt.Errorf("the code at %#x differs from %s: % x, want % x", m.Lo+uint64(k), m.Path,
				got[k:min(k+8, len(got))], want[k:min(k+8, len(want))])
		}
	}
	return nil
}

// firstDiff is the first index where a and b (of one length) differ, or -1.
func firstDiff(a, b []byte) int {
	if bytes.Equal(a, b) {
		return -1
	}
	for k := range a {
		if a[k] != b[k] {
			return k
		}
	}
	return -1
}
