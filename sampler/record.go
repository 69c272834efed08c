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
// (perf_event_open(2), PERF_RECORD_SAMPLE).
const sampleSize = recordHeaderSize + 8 + 8 + 8

// ErrBadRecord is wrapped by parse's errors: the ring buffer holds a record
// this package cannot read.
var ErrBadRecord = errors.New("bad perf record")

// parse decodes the records in b, appending the samples to out and adding
// the samples the kernel reported lost to *lost. It stops at the first
// record it cannot read.
func parse(b []byte, out []Sample, lost *uint64) ([]Sample, error) {
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
			out = append(out, Sample{
				IP:   binary.LittleEndian.Uint64(rec[8:]),
				PID:  binary.LittleEndian.Uint32(rec[16:]),
				TID:  binary.LittleEndian.Uint32(rec[20:]),
				Time: binary.LittleEndian.Uint64(rec[24:]),
			})
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
