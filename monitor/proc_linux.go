//go:build linux

package monitor

import (
	"os"
	"strconv"
	"strings"
)

// statusField returns the value of field key ("SigCgt", "TracerPid") in a
// /proc status file (proc(5)), trimmed, and whether it was there.
func statusField(path, key string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// signalInMask reports whether signal sig is set in a hexadecimal signal
// mask field of a status file (SigPnd, SigCgt).
func signalInMask(path, key string, sig int) bool {
	v, ok := statusField(path, key)
	if !ok {
		return false
	}
	mask, err := strconv.ParseUint(v, 16, 64)
	return err == nil && mask&(1<<(uint(sig)-1)) != 0
}

// trapPending reports whether a SIGTRAP is pending for thread tid itself
// (SigPnd in /proc/TID/status): an int3 it executed whose trap the kernel
// has not reported yet.
func trapPending(tid int) bool {
	return signalInMask("/proc/"+strconv.Itoa(tid)+"/status", "SigPnd", 5)
}
