package symtab

import (
	"slices"
	"testing"
)

// TestScanJumps reads hand-assembled functions at 0x1000: the targets of
// jumps and branches inside the function, not of calls or of jumps out
// of it; and no answer for an indirect jump, an int3, or a jump into the
// middle of an instruction.
func TestScanJumps(t *testing.T) {
	for _, c := range []struct {
		name string
		code []byte
		want []uint64
		ok   bool
	}{
		{"straight", []byte{0x55, 0x48, 0x89, 0xe5, 0x5d, 0xc3}, nil, true},
		// cmp $1,%edi; jle +2; xor %eax,%eax; ret; mov $1,%eax; ret
		{"branch", []byte{0x83, 0xff, 0x01, 0x7e, 0x03, 0x31, 0xc0, 0xc3, 0xb8, 0x01, 0, 0, 0, 0xc3}, []uint64{0x1008}, true},
		// call +0 (to the next instruction's address: a call, not a leader); jmp rel32 out; ret
		{"call and tail jump", []byte{0xe8, 0, 0, 0, 0, 0xe9, 0x00, 0x10, 0, 0, 0xc3}, nil, true},
		// jmp back to the start; jne rel32 (0F 85) to the ret
		{"loop", []byte{0x90, 0x0f, 0x85, 0x02, 0, 0, 0, 0xeb, 0xf7, 0xc3}, []uint64{0x1000, 0x1009}, true},
		{"indirect jmp", []byte{0xff, 0xe0}, nil, false},
		{"notrack indirect jmp", []byte{0x3e, 0xff, 0x24, 0xc5, 0, 0, 0, 0}, nil, false},
		{"int3", []byte{0x90, 0xcc}, nil, false},
		// jmp +1: into the middle of the mov that follows
		{"mid-instruction", []byte{0xeb, 0x01, 0xb8, 0x01, 0, 0, 0, 0xc3}, nil, false},
		// indirect call (FF /2) is no jump
		{"indirect call", []byte{0xff, 0xd0, 0xc3}, nil, true},
		// a VEX instruction (vzeroupper) and a ret
		{"vex", []byte{0xc5, 0xf8, 0x77, 0xc3}, nil, true},
	} {
		got, ok := ScanJumps(c.code, 0x1000)
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("%s: %#x, %v; want %#x, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// TestEndOf classifies how instructions end a block.
func TestEndOf(t *testing.T) {
	for _, c := range []struct {
		code []byte
		n    int
		want Ender
	}{
		{[]byte{0x55}, 1, EndsNot},                         // push %rbp
		{[]byte{0xc3}, 1, EndsAfter},                       // ret
		{[]byte{0xf3, 0xc3}, 2, EndsAfter},                 // repz ret
		{[]byte{0xeb, 0x10}, 2, EndsAfter},                 // jmp rel8
		{[]byte{0x7e, 0x03}, 2, EndsCond},                  // jle rel8
		{[]byte{0x0f, 0x85, 1, 0, 0, 0}, 6, EndsCond},      // jne rel32
		{[]byte{0xc7, 0xf8, 1, 0, 0, 0}, 6, EndsCond},      // xbegin
		{[]byte{0xe8, 0, 0, 0, 0}, 5, EndsAt},              // call rel32
		{[]byte{0xff, 0xd0}, 2, EndsAt},                    // call *%rax
		{[]byte{0x0f, 0x0b}, 2, EndsAt},                    // ud2
		{[]byte{0xf4}, 1, EndsAt},                          // hlt
		{[]byte{0xff, 0xe0}, 2, EndsUnknown},               // jmp *%rax
		{[]byte{0xcc}, 1, EndsUnknown},                     // int3
		{[]byte{0xc7, 0xc0, 1, 0, 0, 0}, 6, EndsNot},       // mov $1,%eax
		{[]byte{0xc5, 0xf8, 0x77}, 3, EndsNot},             // vzeroupper
		{[]byte{0x48, 0x8b, 0x05, 0, 0, 0, 0}, 7, EndsNot}, // mov 0(%rip),%rax
		{[]byte{0x0f, 0x1f, 0x44, 0x00, 0x00}, 5, EndsNot}, // nopl
	} {
		if n, e := EndOf(c.code); n != c.n || e != c.want {
			t.Errorf("% x: %d, %d; want %d, %d", c.code, n, e, c.n, c.want)
		}
	}
}
