package linemodel

import "testing"

// TestOnlyEpilogue: the code after a closing brace's row is only the
// epilogue when it places the return value and releases the frame.
func TestOnlyEpilogue(t *testing.T) {
	for _, tc := range []struct {
		name string
		code []byte
		want bool
	}{
		{"pop ret", []byte{0x5d, 0xc3}, true},
		{"leave ret", []byte{0xc9, 0xc3}, true},
		// g++ -O0, a double returned from two places (templates.cpp's
		// biggest<double>): movq %xmm0,%rax; movq %rax,%xmm0; pop; ret.
		{"double through rax", []byte{0x66, 0x48, 0x0f, 0x7e, 0xc0, 0x66, 0x48, 0x0f, 0x6e, 0xc0, 0x5d, 0xc3}, true},
		// movq %xmm1,%rax is no return value's move.
		{"xmm1 to rax", []byte{0x66, 0x48, 0x0f, 0x7e, 0xc8, 0x5d, 0xc3}, false},
		{"add eax", []byte{0x83, 0xc0, 0x01, 0x5d, 0xc3}, false},
	} {
		if got := onlyEpilogue(tc.code, 0x1000, nil); got != tc.want {
			t.Errorf("%s: onlyEpilogue = %v, want %v", tc.name, got, tc.want)
		}
	}
}
