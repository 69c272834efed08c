package lineinfo

import "encoding/binary"

// A reader decodes little-endian DWARF values from a section with a sticky
// error, in the manner of debug/dwarf's buf: the first failure is kept
// (with its section offset), later reads return zeros, and callers check
// err once after a batch of reads.
type reader struct {
	data []byte
	off  int    // next byte to read, relative to data
	base uint64 // section offset of data[0]
	err  *DecodeError
}

func (r *reader) fail(msg string) {
	if r.err == nil {
		r.err = &DecodeError{Section: ".debug_line", Offset: r.base + uint64(r.off), Msg: msg}
	}
	r.off = len(r.data)
}

func (r *reader) left() int { return len(r.data) - r.off }

func (r *reader) bytes(n int) []byte {
	if n < 0 || n > r.left() {
		r.fail("unexpected end of data")
		return nil
	}
	b := r.data[r.off : r.off+n]
	r.off += n
	return b
}

func (r *reader) u8() uint8 {
	if r.off >= len(r.data) {
		r.fail("unexpected end of data")
		return 0
	}
	b := r.data[r.off]
	r.off++
	return b
}

func (r *reader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

// uleb reads an unsigned LEB128 number. [DWARF5 7.6]
func (r *reader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		b := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(b&0x7f) << shift
		}
		if b&0x80 == 0 {
			return v
		}
	}
}

// sleb reads a signed LEB128 number. [DWARF5 7.6]
func (r *reader) sleb() int64 {
	var v int64
	var shift uint
	for {
		b := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(b&0x7f) << shift
		}
		shift += 7
		if b&0x80 == 0 {
			if shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

// cstring reads a NUL-terminated string.
func (r *reader) cstring() string {
	for i := r.off; i < len(r.data); i++ {
		if r.data[i] == 0 {
			s := string(r.data[r.off:i])
			r.off = i + 1
			return s
		}
	}
	r.fail("unterminated string")
	return ""
}
