package breakpoint

import "testing"

func TestGoPrologueEnd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		code   []byte
		after  int
		target uint64
		ok     bool
	}{
		// CMPQ SP, 0x10(R14); JBE +0x70; PUSHQ BP
		{"small frame", []byte{0x49, 0x3b, 0x66, 0x10, 0x76, 0x70, 0x55}, 6, 0x1000 + 6 + 0x70, true},
		// LEAQ -0x18(SP), R12; CMPQ R12, 0x10(R14); JBE rel32 0x210; PUSHQ BP
		{"large frame", []byte{0x4c, 0x8d, 0x64, 0x24, 0xe8, 0x4d, 0x3b, 0x66, 0x10, 0x0f, 0x86, 0x10, 0x02, 0x00, 0x00, 0x55}, 15, 0x1000 + 15 + 0x210, true},
		// PUSHQ BP; MOVQ SP, BP: a C function
		{"c function", []byte{0x55, 0x48, 0x89, 0xe5}, 0, 0, false},
		// CMPQ SP, 0x18(R14): not the stack guard
		{"other field", []byte{0x49, 0x3b, 0x66, 0x18, 0x76, 0x70}, 0, 0, false},
		// CMPQ SP, 0x10(R14); JA: not a stack check
		{"other jump", []byte{0x49, 0x3b, 0x66, 0x10, 0x77, 0x70}, 0, 0, false},
		{"truncated", []byte{0x49, 0x3b}, 0, 0, false},
		{"empty", nil, 0, 0, false},
	} {
		after, target, ok := goPrologueEnd(tc.code, 0x1000)
		if ok != tc.ok || after != tc.after || target != tc.target {
			t.Errorf("%s: goPrologueEnd = %d, %#x, %v; want %d, %#x, %v", tc.name, after, target, ok, tc.after, tc.target, tc.ok)
		}
	}
}
