//go:build linux && amd64

package monitor

import (
	"encoding/hex"
	"testing"
)

// TestHasWrgsbase: the search for wrgsbase finds it with and without a
// REX prefix, at the ends of the code, and not its neighbours of 0F AE /r
// (wrfsbase, rdgsbase, a memory operand, ldmxcsr).
func TestHasWrgsbase(t *testing.T) {
	for _, c := range []struct {
		hex  string
		want bool
	}{
		{"f3480faedf", true}, // wrgsbase %rdi
		{"f30faed8", true},   // wrgsbase %eax
		{"f3490faedb", true}, // wrgsbase %r11
		{"90f3480faedf90", true},
		{"f3480faed7", false}, // wrfsbase %rdi
		{"f3480faecf", false}, // rdgsbase %rdi
		{"0faed8", false},     // no F3
		{"f30fae18", false},   // mod 00: a memory operand (stmxcsr form)
		{"0fae5df8", false},   // stmxcsr -0x8(%rbp)
		{"f3480fae", false},   // cut short
		{"", false},
	} {
		b, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatal(err)
		}
		if got := hasWrgsbase(b); got != c.want {
			t.Errorf("hasWrgsbase(%s) = %v, want %v", c.hex, got, c.want)
		}
	}
}

// TestSeccompOf reads the Seccomp lines of this process's status.
func TestSeccompOf(t *testing.T) {
	mode, filters, err := seccompOf("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if mode < 0 || mode > 2 || mode == 0 && filters != 0 {
		t.Errorf("seccompOf = %d, %d", mode, filters)
	}
}
