package sampler

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// A Sample is one tick of a thread's CPU clock, taken while it ran user code.
type Sample struct {
	PID, TID uint32 // process (thread group) and thread
	Time     uint64 // CLOCK_MONOTONIC, nanoseconds
	IP       uint64 // the runtime address of the interrupted instruction
	// Callers are the return addresses of the thread's user call chain
	// at the sample, innermost first (Config.Callchain), as the kernel
	// unwound them by frame pointers: a caller whose code keeps no frame
	// pointer is skipped or ends the chain. nil without Callchain.
	Callers []uint64
	// Top is the word at the thread's user stack pointer at the sample
	// (Config.Callchain), 0 when the kernel could not read it: the
	// return address of a function that has pushed nothing, whose caller
	// the frame-pointer chain skips.
	Top uint64
	// SP and BP are the thread's user stack and frame pointers at the
	// sample, and Stack the user stack the kernel copied from SP up
	// (Config.Callchain; nil when it copied none): what an unwinder by
	// call frame information walks. Stack aliases the ring buffer and is
	// valid only until Deliver returns.
	SP, BP uint64
	Stack  []byte
}

// The record types read from the ring buffer (include/uapi/linux/perf_event.h,
// enum perf_event_type).
const (
	recordLost   = 2
	recordSample = 9
)

// recordHeaderSize is the size of struct perf_event_header: type u32, misc
// u16, size u16.
const recordHeaderSize = 8

// sampleSize is a PERF_RECORD_SAMPLE with sample_type IP|TID|TIME: the
// header, then u64 ip; u32 pid, tid; u64 time, in that order
// (perf_event_open(2), PERF_RECORD_SAMPLE). With CALLCHAIN, u64 nr and
// u64 ips[nr] follow.
const sampleSize = recordHeaderSize + 8 + 8 + 8

// userRegs is the PERF_SAMPLE_REGS_USER mask the sampler asks for: bp,
// sp and ip (arch/x86/include/uapi/asm/perf_regs.h: PERF_REG_X86_BP 6,
// SP 7, IP 8), which the record lists in that order.
const userRegs = 1<<6 | 1<<7 | 1<<8

// contextMax is PERF_CONTEXT_MAX (-4095): a call chain's entries from it up
// are markers of the context that follows (PERF_CONTEXT_USER), not
// addresses.
const contextMax = ^uint64(4095 - 1)

// ErrBadRecord is wrapped by parse's errors: the ring buffer holds a record
// this package cannot read.
var ErrBadRecord = errors.New("bad perf record")

// parse decodes the records in b, appending the samples to out and adding
// the samples the kernel reported lost to *lost. regs is whether a sample
// with a call chain carries the user registers (userRegs) after it. It
// stops at the first record it cannot read.
func parse(b []byte, regs bool, out []Sample, lost *uint64) ([]Sample, error) {
	for len(b) > 0 {
		if len(b) < recordHeaderSize {
			return out, fmt.Errorf("%w: %d bytes left, less than a header", ErrBadRecord, len(b))
		}
		typ := binary.LittleEndian.Uint32(b)
		size := int(binary.LittleEndian.Uint16(b[6:]))
		if size < recordHeaderSize || size > len(b) {
			return out, fmt.Errorf("%w: type %d of size %d with %d bytes left", ErrBadRecord, typ, size, len(b))
		}
		rec := b[:size]
		b = b[size:]
		switch typ {
		case recordSample:
			if size < sampleSize {
				return out, fmt.Errorf("%w: sample of %d bytes, want %d", ErrBadRecord, size, sampleSize)
			}
			smp := Sample{
				IP:   binary.LittleEndian.Uint64(rec[8:]),
				PID:  binary.LittleEndian.Uint32(rec[16:]),
				TID:  binary.LittleEndian.Uint32(rec[20:]),
				Time: binary.LittleEndian.Uint64(rec[24:]),
			}
			if size > sampleSize {
				if err := parseChain(rec[sampleSize:], regs, &smp); err != nil {
					return out, err
				}
			}
			out = append(out, smp)
		case recordLost:
			// u64 id; u64 lost
			if size >= recordHeaderSize+16 {
				*lost += binary.LittleEndian.Uint64(rec[16:])
			}
		}
		// Other records (throttling) carry nothing we use.
	}
	return out, nil
}

// parseChain reads a sample's call chain (u64 nr, u64 ips[nr]) into
// smp.Callers: the user addresses after the sampled ip itself, which the
// chain lists first, with the context markers left out. With regs, the
// user registers follow (u64 abi, then u64 bp, sp, ip unless abi is
// PERF_SAMPLE_REGS_ABI_NONE): smp.BP, smp.SP. The user stack's dump
// follows when there is room (u64 size, char data[size], u64 dyn_size:
// PERF_SAMPLE_STACK_USER): smp.Stack is its dyn_size bytes, smp.Top its
// first word.
func parseChain(b []byte, regs bool, smp *Sample) error {
	if len(b) < 8 {
		return fmt.Errorf("%w: call chain of %d bytes, want its length", ErrBadRecord, len(b))
	}
	nr := binary.LittleEndian.Uint64(b)
	if nr > uint64(len(b)-8)/8 {
		return fmt.Errorf("%w: call chain of %d entries in %d bytes", ErrBadRecord, nr, len(b)-8)
	}
	rest := b[8+8*nr:]
	if regs && len(rest) >= 8 {
		abi := binary.LittleEndian.Uint64(rest)
		rest = rest[8:]
		if abi != 0 {
			if len(rest) < 24 {
				return fmt.Errorf("%w: user registers in %d bytes, want 24", ErrBadRecord, len(rest))
			}
			smp.BP = binary.LittleEndian.Uint64(rest)
			smp.SP = binary.LittleEndian.Uint64(rest[8:])
			rest = rest[24:]
		}
	}
	if len(rest) >= 8 {
		size := binary.LittleEndian.Uint64(rest)
		if size >= 8 && len(rest) >= 16 && size <= uint64(len(rest)-16) {
			dyn := binary.LittleEndian.Uint64(rest[8+size:])
			if dyn >= 8 {
				smp.Top = binary.LittleEndian.Uint64(rest[8:])
				smp.Stack = rest[8 : 8+min(dyn, size)]
			}
		}
	}
	smp.Callers = make([]uint64, 0, nr)
	first := true
	for k := uint64(0); k < nr; k++ {
		pc := binary.LittleEndian.Uint64(b[8+8*k:])
		switch {
		case pc >= contextMax:
		case first && pc == smp.IP:
			first = false
		default:
			first = false
			smp.Callers = append(smp.Callers, pc)
		}
	}
	return nil
}
