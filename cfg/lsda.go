package cfg

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
)

// This file reads the exception landing pads of C++ functions (catch
// blocks, and cleanups that run destructors then call _Unwind_Resume):
// code no control flow of the function reaches, entered by the unwinder.
// Each function's FDE in .eh_frame points at its language-specific data
// area (LSDA) in .gcc_except_table, whose call-site table lists the
// landing pads. The formats are those of the LSB Core specification,
// "Exception Frames" (10.6, .eh_frame) and the Itanium C++ ABI, "Exception
// Handling" (level II, the LSDA as GCC's __gxx_personality_v0 reads it,
// libstdc++ eh_personality.cc and unwind-pe.h).

// An EHError reports malformed exception-handling data: where it is and
// what is wrong. Offset is relative to the start of Section.
type EHError struct {
	Section string // ".eh_frame" or ".gcc_except_table"
	Offset  uint64
	Msg     string
	Err     error // the underlying failure (reading an indirect pointer), or nil
}

// Error implements error.
func (e *EHError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("cfg: %s at offset %#x: %s: %v", e.Section, e.Offset, e.Msg, e.Err)
	}
	return fmt.Sprintf("cfg: %s at offset %#x: %s", e.Section, e.Offset, e.Msg)
}

// Unwrap returns the underlying failure, so errors.Is(err, ErrNotMapped)
// works.
func (e *EHError) Unwrap() error { return e.Err }

// An EHSection is the contents of one section at its link-time address.
type EHSection struct {
	Addr uint64
	Data []byte
}

// EHSections are the inputs of ParseLandingPads.
type EHSections struct {
	EHFrame     EHSection // .eh_frame
	ExceptTable EHSection // .gcc_except_table, holding the LSDAs
	// TextBase and DataBase are the bases of DW_EH_PE_textrel and
	// DW_EH_PE_datarel pointers [LSB 10.5.1, DWARF Exception Header
	// Encoding]: the start of .text and of .eh_frame_hdr (or .got).
	TextBase, DataBase uint64
	// Image reads DW_EH_PE_indirect pointers (to an LSDA or a landing-pad
	// base); nil makes a function that uses one an error.
	Image Image
}

// DWARF exception-header pointer encodings [LSB 10.5.1, Tables 10-5 and
// 10-6].
const (
	ehPEAbsptr   = 0x00
	ehPEUleb128  = 0x01
	ehPEUdata2   = 0x02
	ehPEUdata4   = 0x03
	ehPEUdata8   = 0x04
	ehPESleb128  = 0x09
	ehPESdata2   = 0x0a
	ehPESdata4   = 0x0b
	ehPESdata8   = 0x0c
	ehPEPcrel    = 0x10
	ehPETextrel  = 0x20
	ehPEDatarel  = 0x30
	ehPEFuncrel  = 0x40
	ehPEAligned  = 0x50
	ehPEIndirect = 0x80
	ehPEOmit     = 0xff
)

// ehReader is a sticky-error reader over one section: the first failure
// is kept and every later read returns zero, so callers check once after a
// batch of reads (debug/dwarf's buf).
type ehReader struct {
	sec  string
	addr uint64 // link-time address of data[0]
	data []byte
	off  int
	err  *EHError
}

func (r *ehReader) fail(msg string) {
	if r.err == nil {
		r.err = &EHError{Section: r.sec, Offset: uint64(r.off), Msg: msg}
	}
}

func (r *ehReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.data)-r.off {
		r.fail(fmt.Sprintf("%d bytes past the end of the data", n))
		return nil
	}
	b := r.data[r.off : r.off+n]
	r.off += n
	return b
}

func (r *ehReader) u8() uint8 {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *ehReader) u16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *ehReader) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *ehReader) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

// uleb reads an unsigned LEB128 number [DWARF5 7.6].
func (r *ehReader) uleb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		if c&0x80 == 0 {
			return v
		}
	}
}

// sleb reads a signed LEB128 number [DWARF5 7.6].
func (r *ehReader) sleb() int64 {
	var v int64
	shift := uint(0)
	for {
		c := r.u8()
		if r.err != nil {
			return 0
		}
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
	}
}

func (r *ehReader) cstring() string {
	if r.err != nil {
		return ""
	}
	i := bytes.IndexByte(r.data[r.off:], 0)
	if i < 0 {
		r.fail("unterminated string")
		return ""
	}
	s := string(r.data[r.off : r.off+i])
	r.off += i + 1
	return s
}

// ehBases are the bases of relative pointer encodings at one place.
type ehBases struct {
	text, data, fn uint64
	image          Image
}

// encoded reads a pointer in encoding enc and applies its base the way
// GCC's read_encoded_value_with_base does: a zero value stays zero (a
// null pointer), pcrel is relative to the address of the field itself.
// [LSB 10.5.1]
func (r *ehReader) encoded(enc uint8, b *ehBases) uint64 {
	if enc == ehPEOmit {
		return 0
	}
	at := r.addr + uint64(r.off)
	if enc&0x70 == ehPEAligned {
		// Aligned to the pointer size by address [LSB 10.5.1].
		if pad := int(-at % 8); pad > 0 {
			r.bytes(pad)
		}
		return r.u64()
	}
	v := r.value(enc)
	if r.err != nil || v == 0 {
		return 0
	}
	switch enc & 0x70 {
	case 0:
	case ehPEPcrel:
		v += at
	case ehPETextrel:
		v += b.text
	case ehPEDatarel:
		v += b.data
	case ehPEFuncrel:
		v += b.fn
	default:
		r.fail(fmt.Sprintf("pointer encoding %#x: unknown application", enc))
		return 0
	}
	if enc&ehPEIndirect != 0 {
		if b.image == nil {
			r.fail(fmt.Sprintf("indirect pointer to %#x with no image to read it", v))
			return 0
		}
		var buf [8]byte
		if _, err := b.image.ReadImage(v, buf[:]); err != nil {
			r.fail(fmt.Sprintf("indirect pointer to %#x", v))
			r.err.Err = err
			return 0
		}
		v = binary.LittleEndian.Uint64(buf[:])
	}
	return v
}

// value reads the value of a pointer in encoding enc (its low four bits),
// without applying a base: also the format of an FDE's PC range.
func (r *ehReader) value(enc uint8) uint64 {
	switch enc & 0x0f {
	case ehPEAbsptr, ehPEUdata8, ehPESdata8:
		return r.u64()
	case ehPEUleb128:
		return r.uleb()
	case ehPEUdata2:
		return uint64(r.u16())
	case ehPEUdata4:
		return uint64(r.u32())
	case ehPESleb128:
		return uint64(r.sleb())
	case ehPESdata2:
		return uint64(int64(int16(r.u16())))
	case ehPESdata4:
		return uint64(int64(int32(r.u32())))
	}
	r.fail(fmt.Sprintf("pointer encoding %#x: unknown format", enc))
	return 0
}

// A cie is what an FDE needs of its CIE.
type cie struct {
	fdeEnc  uint8 // 'R' augmentation; absptr without one
	lsdaEnc uint8 // 'L' augmentation; omit without one
	z       bool  // augmentation data present ('z')
}

// ParseLandingPads reads the exception landing pads of every function
// described in s: for each FDE of .eh_frame whose augmentation data points
// at an LSDA, the distinct landing pads of its call-site table, sorted,
// keyed by the FDE's initial location (the function's start). Functions
// without an LSDA or without landing pads are absent.
//
// When the data is malformed it returns an *EHError, along with the pads
// of the functions read before it; it never panics.
func ParseLandingPads(s EHSections) (map[uint64][]uint64, error) {
	pads := map[uint64][]uint64{}
	cies := map[int]*cie{}
	bases := ehBases{text: s.TextBase, data: s.DataBase, image: s.Image}
	r := &ehReader{sec: ".eh_frame", addr: s.EHFrame.Addr, data: s.EHFrame.Data}
	var firstErr error
	for r.off < len(r.data) {
		// [LSB 10.6.1] Length, Extended Length, CIE ID / CIE Pointer.
		start := r.off
		length := uint64(r.u32())
		if r.err != nil {
			return pads, r.err
		}
		if length == 0 {
			break // the zero terminator
		}
		if length == 0xffffffff {
			length = r.u64()
		}
		if r.err != nil || length < 4 || length > uint64(len(r.data)-r.off) {
			r.off = start
			r.fail(fmt.Sprintf("entry length %#x: shorter than its ID or past the end of the section", length))
			return pads, r.err
		}
		end := r.off + int(length)
		idAt := r.off
		id := r.u32()
		ent := &ehReader{sec: r.sec, addr: r.addr, data: r.data[:end], off: r.off}
		r.off = end
		if id == 0 {
			c := parseCIE(ent)
			if ent.err != nil {
				return pads, ent.err
			}
			cies[start] = c
			continue
		}
		// An FDE's CIE pointer is the distance back from the pointer
		// itself to its CIE.
		c := cies[idAt-int(id)]
		if int(id) > idAt || c == nil {
			ent.off = idAt
			ent.fail(fmt.Sprintf("FDE's CIE pointer %#x does not lead to a CIE", id))
			return pads, ent.err
		}
		fn, lsda := parseFDE(ent, c, &bases)
		if ent.err != nil {
			return pads, ent.err
		}
		if lsda == 0 {
			continue
		}
		lp, err := parseLSDA(s.ExceptTable, lsda, fn, &bases, start)
		if err != nil {
			// One bad LSDA loses that function's pads only.
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if len(lp) > 0 {
			pads[fn] = append(pads[fn], lp...)
			pads[fn] = sortedUnique(pads[fn])
		}
	}
	return pads, firstErr
}

// parseCIE reads a CIE after its ID [LSB 10.6.1.1].
func parseCIE(r *ehReader) *cie {
	c := &cie{fdeEnc: ehPEAbsptr, lsdaEnc: ehPEOmit}
	version := r.u8()
	aug := r.cstring()
	if r.err != nil {
		return nil
	}
	if version != 1 && version != 3 {
		r.fail(fmt.Sprintf("CIE version %d, want 1 or 3", version))
		return nil
	}
	if len(aug) >= 2 && aug[:2] == "eh" {
		r.u64() // the old GNU "eh" data: a pointer to the exception table
		aug = aug[2:]
	}
	r.uleb() // code alignment factor
	r.sleb() // data alignment factor
	if version == 1 {
		r.u8() // return address register
	} else {
		r.uleb()
	}
	if r.err != nil || aug == "" || aug[0] != 'z' {
		if aug != "" && aug[0] != 'z' {
			r.fail(fmt.Sprintf("augmentation %q without augmentation data", aug))
		}
		return c
	}
	c.z = true
	n := r.uleb()
	if r.err != nil || n > uint64(len(r.data)-r.off) {
		r.fail(fmt.Sprintf("augmentation data of %d bytes runs past the CIE", n))
		return nil
	}
	ad := &ehReader{sec: r.sec, addr: r.addr, data: r.data[:r.off+int(n)], off: r.off}
augs:
	for _, ch := range aug[1:] {
		switch ch {
		case 'L':
			c.lsdaEnc = ad.u8()
		case 'R':
			c.fdeEnc = ad.u8()
		case 'P':
			// The personality routine: its value is not needed, only
			// its length; read it without dereferencing.
			enc := ad.u8()
			ad.encoded(enc&^ehPEIndirect, &ehBases{})
		case 'S', 'B', 'G':
			// Signal frame, AArch64 B key, MTE-tagged frame: no data.
		default:
			// Unknown augmentation: the rest of the data is not
			// interpretable, but its length is known, so stop here.
			break augs
		}
	}
	if ad.err != nil {
		r.err = ad.err
		return nil
	}
	r.off += int(n)
	return c
}

// parseFDE reads an FDE after its CIE pointer [LSB 10.6.1.2] and returns
// its initial location and its LSDA (0 for none).
func parseFDE(r *ehReader, c *cie, b *ehBases) (fn, lsda uint64) {
	fn = r.encoded(c.fdeEnc, b)
	r.value(c.fdeEnc) // address range
	if !c.z || r.err != nil {
		return fn, 0
	}
	n := r.uleb()
	if r.err != nil || n > uint64(len(r.data)-r.off) {
		r.fail(fmt.Sprintf("augmentation data of %d bytes runs past the FDE", n))
		return 0, 0
	}
	if c.lsdaEnc == ehPEOmit || n == 0 {
		return fn, 0
	}
	ad := &ehReader{sec: r.sec, addr: r.addr, data: r.data[:r.off+int(n)], off: r.off}
	fb := *b
	fb.fn = fn
	lsda = ad.encoded(c.lsdaEnc, &fb)
	if ad.err != nil {
		r.err = ad.err
		return 0, 0
	}
	return fn, lsda
}

// parseLSDA reads the LSDA at link-time address lsda, for the function
// starting at fn (whose FDE is at offset fde of .eh_frame), and returns
// its landing pads, in call-site order. The
// header and call-site table are read as __gxx_personality_v0 reads them
// (Itanium C++ ABI, Exception Handling, and libstdc++'s
// parse_lsda_header): LPStart (omitted: the function's start), the type
// table's encoding and offset, the call-site encoding and table length;
// then per call site its start, length and landing pad (relative to
// LPStart; 0 for none) and an action (ULEB128).
func parseLSDA(sec EHSection, lsda, fn uint64, b *ehBases, fde int) ([]uint64, error) {
	if lsda < sec.Addr || lsda-sec.Addr >= uint64(len(sec.Data)) {
		return nil, &EHError{Section: ".eh_frame", Offset: uint64(fde), Msg: fmt.Sprintf("LSDA at %#x of the function at %#x is outside .gcc_except_table", lsda, fn)}
	}
	r := &ehReader{sec: ".gcc_except_table", addr: sec.Addr, data: sec.Data, off: int(lsda - sec.Addr)}
	fb := *b
	fb.fn = fn
	lpStart := fn
	if enc := r.u8(); enc != ehPEOmit {
		lpStart = r.encoded(enc, &fb)
	}
	if enc := r.u8(); enc != ehPEOmit {
		r.uleb() // offset of the end of the type table
	}
	csEnc := r.u8()
	n := r.uleb()
	if r.err != nil {
		return nil, r.err
	}
	if n > uint64(len(r.data)-r.off) {
		r.fail(fmt.Sprintf("call-site table of %d bytes runs past the end of the section", n))
		return nil, r.err
	}
	cs := &ehReader{sec: r.sec, addr: r.addr, data: r.data[:r.off+int(n)], off: r.off}
	var pads []uint64
	for cs.off < len(cs.data) {
		cs.encoded(csEnc, &fb) // start, relative to the function's start
		cs.encoded(csEnc, &fb) // length
		lp := cs.encoded(csEnc, &fb)
		cs.uleb() // action: 0 for a cleanup, else 1 + offset into the action table
		if cs.err != nil {
			return nil, cs.err
		}
		if lp != 0 {
			pads = append(pads, lpStart+lp)
		}
	}
	return pads, nil
}

func sortedUnique(a []uint64) []uint64 {
	sort.Slice(a, func(i, j int) bool { return a[i] < a[j] })
	out := a[:0]
	for i, v := range a {
		if i == 0 || v != a[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// ErrNoEHFrame reports an ELF file without an .eh_frame section: it has no
// unwind tables, so no landing pads either.
var ErrNoEHFrame = errors.New("no .eh_frame section")

// ELFLandingPads reads the landing pads of every function of the ELF file
// r, as ParseLandingPads does, keyed by function start (link-time
// addresses). A file without .gcc_except_table has none (an empty map); a
// file without .eh_frame returns ErrNoEHFrame. It never panics.
func ELFLandingPads(r io.ReaderAt) (pads map[uint64][]uint64, err error) {
	defer func() {
		if p := recover(); p != nil {
			pads, err = nil, fmt.Errorf("cfg: corrupt ELF file: debug/elf panicked: %v", p)
		}
	}()
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("cfg: %w", err)
	}
	eh := ef.Section(".eh_frame")
	if eh == nil || eh.Type == elf.SHT_NOBITS {
		return nil, ErrNoEHFrame
	}
	et := ef.Section(".gcc_except_table")
	if et == nil || et.Type == elf.SHT_NOBITS {
		return map[uint64][]uint64{}, nil
	}
	var s EHSections
	for _, sec := range []struct {
		s   *elf.Section
		out *EHSection
	}{{eh, &s.EHFrame}, {et, &s.ExceptTable}} {
		data, err := sec.s.Data()
		if err != nil {
			return nil, fmt.Errorf("cfg: reading %s: %w", sec.s.Name, err)
		}
		*sec.out = EHSection{Addr: sec.s.Addr, Data: data}
	}
	if t := ef.Section(".text"); t != nil {
		s.TextBase = t.Addr
	}
	if h := ef.Section(".eh_frame_hdr"); h != nil {
		s.DataBase = h.Addr
	}
	s.Image = &lazyImage{r: r}
	return ParseLandingPads(s)
}

// lazyImage opens the ELFImage of r on the first read: only indirect
// pointers need it, and compilers rarely emit them for an LSDA.
type lazyImage struct {
	r   io.ReaderAt
	im  *ELFImage
	err error
}

func (l *lazyImage) ReadImage(addr uint64, buf []byte) (int, error) {
	if l.im == nil && l.err == nil {
		l.im, l.err = NewELFImage(l.r)
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.im.ReadImage(addr, buf)
}
