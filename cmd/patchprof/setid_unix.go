//go:build unix

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// capSysPtrace is CAP_SYS_PTRACE's bit in the capability sets
// (linux/capability.h).
const capSysPtrace = 19

// setIDNotes says, one line each, which set-user-ID and set-group-ID bits
// of the program at path the kernel will not honour when patchprof starts
// it under ptrace: execve(2) ignores them for a traced process unless the
// tracer has CAP_SYS_PTRACE (ptrace(2), "execve(2) under ptrace"), so the
// program runs with patchprof's own IDs. A bit that would change nothing
// (the file is patchprof's user's or group's) gets no note.
func setIDNotes(path, prog string) []string {
	st, err := os.Stat(path)
	if err != nil || st.Mode()&(os.ModeSetuid|os.ModeSetgid) == 0 || hasCapability(capSysPtrace) {
		return nil
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	var notes []string
	if st.Mode()&os.ModeSetuid != 0 && int(sys.Uid) != os.Geteuid() {
		notes = append(notes, fmt.Sprintf("set-user-ID bit of %s is not honoured under tracing: it runs as uid %d", prog, os.Geteuid()))
	}
	if st.Mode()&os.ModeSetgid != 0 && int(sys.Gid) != os.Getegid() {
		notes = append(notes, fmt.Sprintf("set-group-ID bit of %s is not honoured under tracing: it runs as gid %d", prog, os.Getegid()))
	}
	return notes
}

// hasCapability reports whether patchprof's effective capability set
// holds capability bit c (proc(5), /proc/self/status CapEff). Where that
// cannot be read, the effective user ID decides (root has them all).
func hasCapability(c uint) bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return os.Geteuid() == 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<c) != 0
		}
	}
	return os.Geteuid() == 0
}
