package cfg

import (
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// The bytes decoding from the entry does not reach: padding, code left
// dead after a call that does not return, and landing pads that only the
// unwinder or the Go runtime enters.

// checkGaps classifies the bytes no instruction covers: padding (nop or
// int3, as compilers align functions and loop heads) is counted and
// skipped; anything else is data or unreachable code, and the function is
// not recoverable. [Larus and Ball 1994, 3.4]
func (b *builder) checkGaps() error {
	code := b.o.Code
	afterFinal := false // the current gap follows a call that does not return, or a trap
	for off := 0; off < len(code); {
		if b.back[off] != 0 {
			off++
			continue
		}
		if off > 0 && b.back[off-1] != 0 {
			k := b.kind[off-int(b.back[off-1])]
			afterFinal = k == kCallNR || k == kTrap
		}
		n := paddingLen(code[off:])
		if n == 0 && allZero(code[off:]) {
			// Zeros to the end: section alignment fill after a
			// function whose symbol has no size (_init).
			n = len(code) - off
		}
		if n == 0 {
			if d := b.deadCode(off); afterFinal && d > 0 {
				b.g.Dead += d
				off += d
				continue
			}
			return &Error{Func: b.o.Name, Addr: b.o.Addr + uint64(off), Err: ErrData,
				Detail: fmt.Sprintf("bytes % x", code[off:min(off+8, len(code))])}
		}
		for i := 0; i < n; i++ {
			if off+i < len(code) && b.back[off+i] != 0 {
				// Padding that runs into code: the instruction decoded as
				// padding overlaps a real one.
				return &Error{Func: b.o.Name, Addr: b.o.Addr + uint64(off), Err: ErrData,
					Detail: "unreached bytes overlap an instruction"}
			}
		}
		b.g.Padding += n
		off += n
	}
	return nil
}

// deadCode returns the length of the unreached bytes at off when they
// decode cleanly up to the next reached instruction or the end. checkGaps
// accepts them only after a call that does not return (or a trap): code a
// compiler left after a call it did not know to be final (Go's runtime
// calling panicdivide, say). It returns 0 for anything else.
func (b *builder) deadCode(off int) int {
	code := b.o.Code
	end := off
	for end < len(code) && b.back[end] == 0 {
		_, n, err := decodeInst(code[end:])
		if err != nil {
			return 0
		}
		for i := 1; i < n && end+i < len(code); i++ {
			if b.back[end+i] != 0 {
				return 0 // overlaps a reached instruction (a landing pad inside it)
			}
		}
		end += n
	}
	if end > len(code) || end < len(code) && b.back[end] != 1 {
		return 0 // runs into the middle of a reached instruction
	}
	return end - off
}

// allZero reports whether b holds only zero bytes.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// land makes off a landing pad: a leader entered from outside the
// function's own flow, decoded like the entry.
func (b *builder) land(off uint32) {
	b.flag[off] |= fLeader | fLanding
	b.queue(off)
}

// deferReturn is the function whose call starts a Go landing pad.
const deferReturn = "runtime.deferreturn"

// landingPads queues the landing pads no control flow reaches: in Go, a
// function with defers has a block starting with CALL runtime.deferreturn
// where the runtime resumes it after a recovered panic (the pc recorded in
// its _func.deferreturn). They are entries from outside, like the
// function's own entry. It reports whether it found a new one.
func (b *builder) landingPads() bool {
	if b.o.CalleeName == nil {
		return false
	}
	code := b.o.Code
	found := false
	for off := 0; off < len(code); {
		if b.back[off] != 0 {
			off++
			continue
		}
		if n := paddingLen(code[off:]); n > 0 {
			off += n
			continue
		}
		inst, n, err := decodeInst(code[off:])
		if err == nil && inst.Op == x86asm.CALL {
			if rel, ok := inst.Args[0].(x86asm.Rel); ok {
				target := b.o.Addr + uint64(off+n) + uint64(int64(rel))
				if name := b.o.CalleeName(target); name == deferReturn || name == deferReturn+".abi0" {
					b.land(uint32(off))
					found = true
				}
			}
		}
		// Skip to the next covered byte: the rest of this gap is not a
		// candidate until it is reached.
		for off < len(code) && b.back[off] == 0 {
			off++
		}
	}
	if found {
		b.decode()
	}
	return found
}
