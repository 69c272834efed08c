package relocate

import (
	"encoding/binary"
	"fmt"
	"sync"
)

// An emitter builds a slot's code, recording the first error (a target out
// of reach) and checking it once at the end.
type emitter struct {
	d   *Displaced
	err string
}

// newEmitter starts the slot code for the n-byte instruction at addr, in
// a Displaced from displacedPool: a fresh one, or one Measure gave back,
// whose buffers are reused.
func newEmitter(addr, slot uint64, n int, form Form) *emitter {
	d := displacedPool.Get().(*Displaced)
	*d = Displaced{Addr: addr, Slot: slot, Len: n, Form: form,
		Code: d.Code[:0], ResumePoints: d.ResumePoints[:0], Exits: d.Exits[:0], Abs: d.Abs[:0]}
	if cap(d.Code) < MaxSlot {
		d.Code = make([]byte, 0, MaxSlot)
	}
	return &emitter{d: d}
}

// displacedPool holds the Displaced values Measure is done with. Only
// Measure puts one back, and only one that Relocate returned to it and
// nothing else holds: every other caller owns what Relocate returns.
var displacedPool = sync.Pool{New: func() any { return new(Displaced) }}

// pc returns the runtime address of the next byte emitted.
func (e *emitter) pc() uint64 { return e.d.Slot + uint64(len(e.d.Code)) }

// bytes emits b as it is.
func (e *emitter) bytes(b ...byte) { e.d.Code = append(e.d.Code, b...) }

// mark records that a thread at the current position is equivalent to one at
// original address to.
func (e *emitter) mark(to uint64) {
	e.d.ResumePoints = append(e.d.ResumePoints, ResumePoint{Off: uint8(len(e.d.Code)), To: to})
}

// rel32 emits the displacement of an instruction that ends right after it,
// and records it as an exit to target (see Displaced).
func (e *emitter) rel32(target uint64) {
	e.d.Exits = append(e.d.Exits, Exit{Off: uint8(len(e.d.Code)), To: target})
	v, ok := Rel32(target, e.pc()+4)
	if !ok && e.err == "" {
		e.err = fmt.Sprintf("%s: target %#x from %#x", ReasonOutOfRange, target, e.pc()+4)
	}
	e.d.Code = binary.LittleEndian.AppendUint32(e.d.Code, uint32(v))
}

// jmp emits jmp rel32 (Intel SDM vol. 2, JMP: E9 cd).
func (e *emitter) jmp(target uint64) {
	e.bytes(0xE9)
	e.rel32(target)
}

// pushReturn stores ret below RSP and then lowers RSP over it, the push half
// of a call, without touching the flags. The stores come first, so a fault in
// them (a stack overflow) leaves RSP as it was and the thread equivalent to
// one at the call; the bytes below RSP are dead at a call, which overwrites
// them itself, and the kernel leaves the 128-byte red zone alone when it
// builds a signal frame (x86-64 psABI 3.2.2).
func (e *emitter) pushReturn(ret uint64) {
	e.mark(e.d.Addr)
	e.bytes(0xC7, 0x44, 0x24, 0xF8) // mov dword [rsp-8], imm32
	lo := len(e.d.Code)
	e.d.Code = binary.LittleEndian.AppendUint32(e.d.Code, uint32(ret))
	e.mark(e.d.Addr)
	e.bytes(0xC7, 0x44, 0x24, 0xFC) // mov dword [rsp-4], imm32
	e.d.Abs = append(e.d.Abs, AbsWord{Lo: lo, Hi: len(e.d.Code)})
	e.d.Code = binary.LittleEndian.AppendUint32(e.d.Code, uint32(ret>>32))
	e.mark(e.d.Addr)
	e.bytes(0x48, 0x8D, 0x64, 0x24, 0xF8) // lea rsp, [rsp-8]
}

// copyInst emits the instruction raw (laid out as lay), with a RIP-relative
// displacement rewritten so that its effective address is the one it had at
// the original address. The displacement is relative to the end of the
// instruction, immediates included, so it is rewritten where the ModRM byte
// says it is, not at the end.
func (e *emitter) copyInst(raw []byte, lay layout) {
	at := len(e.d.Code)
	start := e.pc()
	e.bytes(raw...)
	if !lay.rip {
		return
	}
	e.d.RIPRelative = true
	d := lay.modrm + 1
	disp := int64(int32(binary.LittleEndian.Uint32(raw[d:])))
	ea := e.d.Addr + uint64(e.d.Len) + uint64(disp)
	v, ok := Rel32(ea, start+uint64(len(raw)))
	if !ok && e.err == "" {
		e.err = fmt.Sprintf("%s: rip-relative operand %#x from %#x", ReasonOutOfRange, ea, start+uint64(len(raw)))
	}
	binary.LittleEndian.PutUint32(e.d.Code[at+d:], uint32(v))
}

// done returns the slot, or the first error recorded while emitting it
// (raw, the original instruction, goes into the error).
func (e *emitter) done(raw []byte) (*Displaced, error) {
	if e.err != "" {
		return nil, &Error{Addr: e.d.Addr, Bytes: append([]byte(nil), raw...), Reason: e.err}
	}
	if len(e.d.Code) > MaxSlot {
		// Not reached: MaxSlot bounds every form. Refusing keeps a bug
		// here from overwriting the next slot.
		return nil, &Error{Addr: e.d.Addr, Bytes: append([]byte(nil), raw...), Reason: fmt.Sprintf("%s: %d bytes", ReasonTooLong, len(e.d.Code))}
	}
	// A reused Displaced's empty lists are nil, as a fresh one's are.
	if len(e.d.ResumePoints) == 0 {
		e.d.ResumePoints = nil
	}
	if len(e.d.Exits) == 0 {
		e.d.Exits = nil
	}
	if len(e.d.Abs) == 0 {
		e.d.Abs = nil
	}
	return e.d, nil
}

// Rel32 returns target-end as a 32-bit displacement, and whether it fits:
// the rel32 of a jump or call that ends at end and goes to target.
func Rel32(target, end uint64) (int32, bool) {
	v := int64(target - end)
	return int32(v), v == int64(int32(v))
}
