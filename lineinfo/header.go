package lineinfo

import "fmt"

// DWARF 5 line table content types and the forms delve decodes for them.
// [DWARF5 6.2.4.1, 7.22, 7.5.6]
const (
	lnctPath     = 0x1
	lnctDirIndex = 0x2
	lnctMD5      = 0x5

	formBlock2    = 0x03
	formBlock4    = 0x04
	formData2     = 0x05
	formData4     = 0x06
	formData8     = 0x07
	formString    = 0x08
	formBlock     = 0x09
	formBlock1    = 0x0a
	formData1     = 0x0b
	formFlag      = 0x0c
	formSdata     = 0x0d
	formStrp      = 0x0e
	formUdata     = 0x0f
	formSecOffset = 0x17
	formStrx      = 0x1a
	formData16    = 0x1e
	formLineStrp  = 0x1f
	formStrx1     = 0x25
	formStrx2     = 0x26
	formStrx3     = 0x27
	formStrx4     = 0x28
)

// A header is what checkHeader learns about one line table unit.
type header struct {
	version      uint16
	addrSize     uint8
	programStart int // offset of the line-number program in the unit
	// dirIndexNotLast is set for a DWARF 5 file entry format with a field
	// after DW_LNCT_directory_index: delve then loses the directory index.
	dirIndexNotLast bool
	fileDirs        []uint64 // DWARF 5: each file's directory index
	fileMD5         [][]byte // DWARF 5: each file's DW_LNCT_MD5, nil when it has none
}

// checkHeader validates the header of the unit in unit (the bytes from
// unit_length to the end of the unit) before delve parses it: delve does
// not check lengths, and allocates and loops by the directory and file
// counts of a DWARF 5 header without bounding them. [DWARF5 6.2.4]
func checkHeader(unit, debugLineStr []byte, base uint64) (*header, *DecodeError) {
	r := &reader{data: unit, base: base}
	r.u32() // unit_length, checked by the caller
	h := &header{version: r.u16()}
	if r.err == nil && (h.version < 2 || h.version > 5) {
		r.fail(fmt.Sprintf("unsupported line table version %d", h.version))
	}
	if h.version >= 5 {
		h.addrSize = r.u8()
		r.u8() // segment_selector_size
	}
	hlen := r.u32()
	h.programStart = r.off + int(hlen)
	if r.err == nil && (uint64(hlen) > uint64(r.left())) {
		r.fail("header_length beyond the unit")
	}
	r.u8() // minimum_instruction_length
	if h.version >= 4 {
		r.u8() // maximum_operations_per_instruction
	}
	r.u8() // default_is_stmt
	r.u8() // line_base
	if lineRange := r.u8(); r.err == nil && lineRange == 0 {
		r.fail("line_range is 0")
	}
	opcodeBase := r.u8()
	if r.err == nil && opcodeBase == 0 {
		r.fail("opcode_base is 0")
	}
	r.bytes(int(opcodeBase) - 1) // standard_opcode_lengths
	if h.version >= 5 {
		// Bound the entry tables by the header, not the unit.
		r.data = r.data[:min(len(r.data), max(h.programStart, r.off))]
		checkEntries(r, debugLineStr, nil)
		h.dirIndexNotLast = checkEntries(r, debugLineStr, h)
	}
	if r.err != nil {
		return nil, r.err
	}
	return h, nil
}

// checkEntries walks a DWARF 5 directory or file name table, checking every
// form is one delve decodes, the count fits the bytes left and string
// offsets fall inside .debug_line_str. When files is not nil (the file
// table) it records each entry's directory index and MD5 there (delve
// keeps neither reliably: it drops the MD5).
func checkEntries(r *reader, debugLineStr []byte, files *header) (dirIndexNotLast bool) {
	nformats := int(r.u8())
	types := make([]uint64, nformats)
	forms := make([]uint64, nformats)
	for i := range nformats {
		types[i], forms[i] = r.uleb(), r.uleb()
		if types[i] == lnctDirIndex && i < nformats-1 {
			dirIndexNotLast = true
		}
	}
	count := r.uleb()
	if r.err != nil {
		return false
	}
	// Every known form takes at least one byte, so a count beyond the bytes
	// left is corrupt, and with no formats at all only count 0 makes sense.
	if count > uint64(r.left()) || (nformats == 0 && count > 0) {
		r.fail(fmt.Sprintf("entry count %d exceeds the header", count))
		return false
	}
	for range count {
		var dir uint64
		var sum []byte
		for i := range nformats {
			if types[i] == lnctMD5 && forms[i] == formData16 {
				sum = r.bytes(16) // [DWARF5 6.2.4.1]: a 16-byte MD5 digest
				continue
			}
			v := skipForm(r, forms[i])
			switch {
			case types[i] == lnctDirIndex:
				dir = v
			case types[i] == lnctPath && forms[i] == formLineStrp && v >= uint64(len(debugLineStr)) && r.err == nil:
				r.fail(fmt.Sprintf("DW_FORM_line_strp offset %#x beyond .debug_line_str", v))
			}
		}
		if r.err != nil {
			return false
		}
		if files != nil {
			files.fileDirs = append(files.fileDirs, dir)
			files.fileMD5 = append(files.fileMD5, sum)
		}
	}
	return dirIndexNotLast
}

// skipForm reads one attribute value of the given form and returns it when
// it is a constant.
func skipForm(r *reader, form uint64) uint64 {
	switch form {
	case formData1, formFlag, formStrx1:
		return uint64(r.u8())
	case formData2, formStrx2:
		return uint64(r.u16())
	case formStrx3:
		b := r.bytes(3)
		if b == nil {
			return 0
		}
		return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16
	case formData4, formLineStrp, formSecOffset, formStrp, formStrx4:
		return uint64(r.u32())
	case formData8:
		b := r.bytes(8)
		var v uint64
		for i := len(b) - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return v
	case formData16:
		r.bytes(16)
	case formUdata, formStrx:
		return r.uleb()
	case formSdata:
		return uint64(r.sleb())
	case formString:
		r.cstring()
	case formBlock:
		n := r.uleb()
		if n > uint64(r.left()) {
			r.fail("block beyond the header")
			return 0
		}
		r.bytes(int(n))
	case formBlock1:
		r.bytes(int(r.u8()))
	case formBlock2:
		r.bytes(int(r.u16()))
	case formBlock4:
		n := r.u32()
		if uint64(n) > uint64(r.left()) {
			r.fail("block beyond the header")
			return 0
		}
		r.bytes(int(n))
	default:
		r.fail(fmt.Sprintf("unsupported form %#x in the file table", form))
	}
	return 0
}
