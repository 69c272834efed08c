package lineinfo

import (
	"encoding/binary"
	"fmt"
)

// The encodings of a Table and of the Subprograms for patchprof's analysis
// cache (package anacache): what Read and Subprograms computed from a
// file's bytes, read back in a fraction of the time. The cache keys an
// entry by the file's contents and patchprof's build, so an encoding is
// only ever read by the code that wrote it; the version byte and the
// bounds checks are for a damaged entry, which is an error, never a panic.

// tableEncoding is the first byte of an encoded Table.
const tableEncoding = 2

// MarshalBinary encodes t for UnmarshalTable: its files, rows, the rows
// and sequence ends Lookup reads, the MD5 digests, and the units
// ReadOptions.DeferGoStd left unrun, as their bytes (a Go program's
// runtime and standard library: run on a lookup's first miss, as in the
// table read). Addresses are stored as differences from the previous
// one, as varints.
func (t *Table) MarshalBinary() ([]byte, error) {
	b := []byte{tableEncoding}
	b = appendString(b, t.goRoot)
	b = binary.AppendUvarint(b, uint64(len(t.Files)))
	for _, f := range t.Files {
		b = appendString(b, f)
	}
	b = binary.AppendUvarint(b, uint64(len(t.Rows)))
	var prev uint64
	for _, r := range t.Rows {
		b = binary.AppendVarint(b, int64(r.Addr-prev))
		b = binary.AppendUvarint(b, uint64(r.File))
		b = binary.AppendUvarint(b, uint64(r.Line))
		prev = r.Addr
	}
	b = binary.AppendUvarint(b, uint64(len(t.lookup)))
	prev = 0
	for _, e := range t.lookup {
		b = binary.AppendVarint(b, int64(e.addr-prev))
		// noFile (all ones) would take five bytes: stored as 0, others
		// one up.
		b = binary.AppendUvarint(b, uint64(e.file+1))
		b = binary.AppendUvarint(b, uint64(e.line))
		b = binary.AppendUvarint(b, uint64(e.ord))
		end := byte(0)
		if e.end {
			end = 1
		}
		b = append(b, end)
		prev = e.addr
	}
	b = binary.AppendUvarint(b, uint64(len(t.md5)))
	for f, sum := range t.md5 {
		b = appendString(b, f)
		b = append(b, sum[:]...)
	}
	if t.deferred == nil {
		return binary.AppendUvarint(b, 0), nil
	}
	b = binary.AppendUvarint(b, uint64(len(t.deferred.units)))
	for _, u := range t.deferred.units {
		b = binary.AppendUvarint(b, u.off)
		b = appendString(b, string(u.data))
	}
	return appendString(b, string(t.deferred.debugLineStr)), nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// UnmarshalTable decodes a table MarshalBinary encoded. A damaged
// encoding is a *DecodeError.
func UnmarshalTable(data []byte) (*Table, error) {
	d := &decoder{buf: data}
	if d.byte() != tableEncoding {
		return nil, &DecodeError{Section: "analysis cache", Msg: "not an encoded line table"}
	}
	t := &Table{goRoot: d.string()}
	t.Files = make([]string, d.count(1))
	for i := range t.Files {
		t.Files[i] = d.string()
	}
	t.Rows = make([]Row, d.count(3))
	var prev uint64
	for i := range t.Rows {
		prev += uint64(d.varint())
		t.Rows[i] = Row{Addr: prev, File: d.uint32(), Line: d.uint32()}
	}
	t.lookup = make([]entry, d.count(5))
	prev = 0
	for i := range t.lookup {
		prev += uint64(d.varint())
		t.lookup[i] = entry{addr: prev, file: d.uint32() - 1, line: d.uint32(), ord: d.uint32(), end: d.byte() == 1}
	}
	if n := d.count(17); n > 0 {
		t.md5 = make(map[string][16]byte, n)
		for range n {
			f := d.string()
			var sum [16]byte
			copy(sum[:], d.bytes(16))
			t.md5[f] = sum
		}
	}
	if n := d.count(2); n > 0 {
		units := make([]span, n)
		for i := range units {
			units[i].off = d.uvarint()
			units[i].data = d.bytes(d.count(1))
		}
		t.deferred = &deferred{units: units, debugLineStr: d.bytes(d.count(1))}
	}
	if d.err == nil && len(d.buf) != 0 {
		d.fail("bytes after the table")
	}
	if d.err != nil {
		return nil, d.err
	}
	for _, r := range t.Rows {
		if int(r.File) >= len(t.Files) {
			return nil, &DecodeError{Section: "analysis cache", Msg: fmt.Sprintf("row names file %d of %d", r.File, len(t.Files))}
		}
	}
	return t, nil
}

// A decoder reads an encoding with a sticky error: the first failure is
// kept, and every later read returns zero.
type decoder struct {
	buf []byte
	off int
	err error
}

func (d *decoder) fail(msg string) {
	if d.err == nil {
		d.err = &DecodeError{Section: "analysis cache", Offset: uint64(d.off), Msg: msg}
	}
	d.buf = nil
}

func (d *decoder) byte() byte {
	if len(d.buf) < 1 {
		d.fail("truncated")
		return 0
	}
	c := d.buf[0]
	d.buf = d.buf[1:]
	d.off++
	return c
}

func (d *decoder) bytes(n int) []byte {
	if len(d.buf) < n {
		d.fail("truncated")
		return nil
	}
	b := d.buf[:n]
	d.buf = d.buf[n:]
	d.off += n
	return b
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.buf = d.buf[n:]
	d.off += n
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.buf = d.buf[n:]
	d.off += n
	return v
}

func (d *decoder) uint32() uint32 {
	v := d.uvarint()
	if v > 1<<32-1 {
		d.fail("value out of range")
	}
	return uint32(v)
}

// count reads a number of elements each at least min bytes long, bounded
// by what is left, so a damaged count never allocates without limit.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if n > uint64(len(d.buf)/min) {
		d.fail("count larger than the data")
		return 0
	}
	return int(n)
}

func (d *decoder) string() string {
	return string(d.bytes(int(d.count(1))))
}

// subprogramsEncoding is the first byte of encoded Subprograms.
const subprogramsEncoding = 2

// MarshalSubprograms encodes what Subprograms returned for
// UnmarshalSubprograms: per subprogram its fields in declaration order,
// numbers as varints, a nil and an empty slice alike as a zero count.
func MarshalSubprograms(subs []Subprogram) ([]byte, error) {
	b := []byte{subprogramsEncoding}
	b = binary.AppendUvarint(b, uint64(len(subs)))
	for _, s := range subs {
		b = appendString(b, s.Name)
		b = binary.AppendUvarint(b, s.LowPC)
		b = appendString(b, s.DeclFile)
		b = binary.AppendVarint(b, int64(s.DeclLine))
		b = append(b, packBools(s.Void, s.Artificial, s.NoReturn, s.GCCO0))
		b = binary.AppendUvarint(b, uint64(len(s.Labels)))
		for _, l := range s.Labels {
			b = binary.AppendUvarint(b, l.Addr)
			b = appendString(b, l.File)
			b = binary.AppendVarint(b, int64(l.Line))
		}
		b = binary.AppendVarint(b, int64(s.Lang))
		b = binary.AppendUvarint(b, uint64(len(s.Locals)))
		for _, l := range s.Locals {
			b = appendString(b, l.Name)
			b = binary.AppendVarint(b, int64(l.Line))
			b = binary.AppendVarint(b, l.FrameOffset)
			b = append(b, packBools(l.Aggregate))
		}
	}
	return b, nil
}

// packBools packs up to eight flags into a byte, the first in bit 0.
func packBools(v ...bool) byte {
	var c byte
	for k, f := range v {
		if f {
			c |= 1 << k
		}
	}
	return c
}

// UnmarshalSubprograms decodes what MarshalSubprograms encoded. A damaged
// encoding is a *DecodeError.
func UnmarshalSubprograms(data []byte) ([]Subprogram, error) {
	d := &decoder{buf: data}
	if d.byte() != subprogramsEncoding {
		return nil, &DecodeError{Section: "analysis cache", Msg: "not encoded subprograms"}
	}
	var subs []Subprogram
	if n := d.count(7); n > 0 {
		subs = make([]Subprogram, n)
	}
	for i := range subs {
		s := &subs[i]
		s.Name = d.string()
		s.LowPC = d.uvarint()
		s.DeclFile = d.string()
		s.DeclLine = int(d.varint())
		f := d.byte()
		s.Void, s.Artificial, s.NoReturn, s.GCCO0 = f&1 != 0, f&2 != 0, f&4 != 0, f&8 != 0
		if n := d.count(3); n > 0 {
			s.Labels = make([]Label, n)
			for k := range s.Labels {
				s.Labels[k] = Label{Addr: d.uvarint(), File: d.string(), Line: int(d.varint())}
			}
		}
		s.Lang = int(d.varint())
		if n := d.count(4); n > 0 {
			s.Locals = make([]Local, n)
			for k := range s.Locals {
				s.Locals[k] = Local{Name: d.string(), Line: int(d.varint()), FrameOffset: d.varint(), Aggregate: d.byte()&1 != 0}
			}
		}
	}
	if d.err == nil && len(d.buf) != 0 {
		d.fail("bytes after the subprograms")
	}
	if d.err != nil {
		return nil, d.err
	}
	return subs, nil
}
