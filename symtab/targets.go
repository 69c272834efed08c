package symtab

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"runtime"
	"slices"
	"sort"
	"sync"

	"golang.org/x/arch/x86/x86asm"
)

// Targets is the set of the module's code addresses that control may reach
// other than by falling through from the instruction before: every symbol's
// address (local, hidden, alias and untyped assembly labels too), every
// direct jump and call target decoded anywhere in the executable segments
// (glibc's __mempcpy_* jump one instruction into the matching __memcpy_*),
// and every code address found in data (the targets of R_X86_64_RELATIVE,
// R_X86_64_64, R_X86_64_IRELATIVE and RELR relocations, and, in a non-PIE
// executable, each aligned 8-byte word of its other segments whose value
// lies in code: function pointers, jump tables and label addresses).
//
// It over-approximates: a word of data that only looks like a code address,
// or a "target" decoded from bytes that are not code, is kept. A patch that
// covers more than one instruction must not cover any of them but its first:
// a stray one costs a shorter patch, a missing one kills the program.
type Targets struct {
	addrs []uint64 // sorted, unique, link-time
}

// Within reports whether some target lies in the open interval (lo, hi).
func (t *Targets) Within(lo, hi uint64) bool {
	if t == nil || hi <= lo+1 {
		return false
	}
	i := sort.Search(len(t.addrs), func(i int) bool { return t.addrs[i] > lo })
	return i < len(t.addrs) && t.addrs[i] < hi
}

// Has reports whether addr is a target.
func (t *Targets) Has(addr uint64) bool {
	if t == nil {
		return false
	}
	_, ok := slices.BinarySearch(t.addrs, addr)
	return ok
}

// Len is the number of targets.
func (t *Targets) Len() int {
	if t == nil {
		return 0
	}
	return len(t.addrs)
}

// Targets returns the module's branch targets, computed at the first call
// (the decoding of every instruction of the executable segments, spread
// over the CPUs) and kept.
func (f *File) Targets() *Targets {
	f.targetsOnce.Do(func() {
		f.targets = f.findTargets()
		f.targetsDone.Store(true)
	})
	return f.targets
}

// SetTargets gives f its Targets from elsewhere (the analysis cache, which
// kept an earlier run's), in place of decoding every instruction again. It
// has no effect once Targets has been called.
func (f *File) SetTargets(t *Targets) {
	f.targetsOnce.Do(func() {
		f.targets = t
		f.targetsDone.Store(true)
	})
}

// ComputedTargets returns the Targets that Targets or SetTargets gave f,
// and false when neither has yet: it computes nothing.
func (f *File) ComputedTargets() (*Targets, bool) {
	if !f.targetsDone.Load() {
		return nil, false
	}
	return f.targets, true
}

// targetsEncoding is the first byte of encoded Targets.
const targetsEncoding = 1

// MarshalBinary encodes t for UnmarshalTargets: the count, then each
// address as its difference from the previous one, as uvarints.
func (t *Targets) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 1+binary.MaxVarintLen64+2*len(t.addrs))
	b = append(b, targetsEncoding)
	b = binary.AppendUvarint(b, uint64(len(t.addrs)))
	var prev uint64
	for _, a := range t.addrs {
		b = binary.AppendUvarint(b, a-prev)
		prev = a
	}
	return b, nil
}

// ErrTargetsEncoding is the error of UnmarshalTargets for bytes that are no
// encoding of MarshalBinary's.
var ErrTargetsEncoding = errors.New("symtab: not an encoding of branch targets")

// UnmarshalTargets decodes MarshalBinary's encoding: ErrTargetsEncoding
// for another version, a cut or trailing byte, or addresses out of order.
func UnmarshalTargets(b []byte) (*Targets, error) {
	if len(b) == 0 || b[0] != targetsEncoding {
		return nil, ErrTargetsEncoding
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, ErrTargetsEncoding
	}
	b = b[k:]
	addrs := make([]uint64, 0, n)
	var prev uint64
	for range n {
		d, k := binary.Uvarint(b)
		if k <= 0 || (len(addrs) > 0 && d == 0) || prev+d < prev {
			return nil, ErrTargetsEncoding
		}
		b = b[k:]
		prev += d
		addrs = append(addrs, prev)
	}
	if len(b) != 0 {
		return nil, ErrTargetsEncoding
	}
	return &Targets{addrs: addrs}, nil
}

func (f *File) findTargets() (t *Targets) {
	defer func() {
		// debug/elf can panic on a corrupt file's sections: keep what
		// the symbols and the code give.
		if p := recover(); p != nil {
			t = &Targets{addrs: slices.Compact(slices.Sorted(slices.Values(slices.Concat(f.symAddrs, f.branchTargets()))))}
		}
	}()
	addrs := slices.Clone(f.symAddrs)
	addrs = append(addrs, f.dataTargets()...)
	addrs = append(addrs, f.branchTargets()...)
	slices.Sort(addrs)
	return &Targets{addrs: slices.Compact(addrs)}
}

// isCode reports whether addr lies in an executable segment.
func (f *File) isCode(addr uint64) bool { return f.segmentOf(addr) != nil }

// branchTargets decodes every executable segment linearly, starting again
// at each function symbol (so that data or padding between functions
// desynchronises the decoding at most up to the next one), and returns the
// targets of its direct jumps and calls that lie in code.
func (f *File) branchTargets() []uint64 {
	type span struct{ lo, hi uint64 }
	var spans []span
	for _, s := range f.segs {
		lo := s.vaddr
		hi := s.vaddr + s.filesz
		i := sort.Search(len(f.Funcs), func(i int) bool { return f.Funcs[i].Addr >= lo })
		for ; i < len(f.Funcs) && f.Funcs[i].Addr < hi; i++ {
			if a := f.Funcs[i].Addr; a > lo {
				spans = append(spans, span{lo, a})
			}
			lo = f.Funcs[i].Addr
		}
		if hi > lo {
			spans = append(spans, span{lo, hi})
		}
	}
	workers := min(runtime.GOMAXPROCS(0), max(1, len(spans)/64))
	out := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var found []uint64
			for k := w; k < len(spans); k += workers {
				sp := spans[k]
				code, ok := f.Code(sp.lo, int(sp.hi-sp.lo))
				if !ok {
					continue
				}
				found = f.decodeTargets(code, sp.lo, found)
			}
			out[w] = found
		}(w)
	}
	wg.Wait()
	return slices.Concat(out...)
}

// decodeTargets appends to found the in-code targets of the direct
// branches and calls of code (at link-time address addr). Bytes that do not
// decode are stepped over one at a time.
func (f *File) decodeTargets(code []byte, addr uint64, found []uint64) []uint64 {
	defer func() {
		// x86asm is not documented to panic; a decoder bug only loses
		// the rest of this span's targets.
		_ = recover()
	}()
	for off := 0; off < len(code); {
		if n, rel, isRel, ok := instLen(code[off:]); ok {
			if isRel {
				found = f.appendTarget(found, addr+uint64(off+n)+uint64(rel))
			}
			off += n
			continue
		}
		inst, err := DecodeInst(code[off:])
		if err != nil {
			off++
			continue
		}
		for _, a := range inst.Args {
			if a == nil {
				break
			}
			if rel, ok := a.(x86asm.Rel); ok {
				found = f.appendTarget(found, addr+uint64(off+inst.Len)+uint64(int64(rel)))
			}
		}
		off += inst.Len
	}
	return found
}

func (f *File) appendTarget(found []uint64, a uint64) []uint64 {
	if f.isCode(a) {
		found = append(found, a)
	}
	return found
}

// symbolTargets returns the addresses of every symbol of syms (functions,
// untyped labels, objects) that lies in an executable segment.
func (f *File) symbolTargets(syms []elf.Symbol) []uint64 {
	var out []uint64
	for i := range syms {
		s := &syms[i]
		switch elf.ST_TYPE(s.Info) {
		case elf.STT_SECTION, elf.STT_FILE, elf.STT_TLS:
			continue
		}
		if s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE && s.Section != elf.SHN_ABS {
			continue
		}
		if f.isCode(s.Value) {
			out = append(out, s.Value)
		}
	}
	return out
}

// dataTargets returns relocTargets of the file, read once and kept: both
// Targets and AddressTaken need them. A corrupt file's sections (debug/elf
// can panic on them) give none.
func (f *File) dataTargets() []uint64 {
	f.dataOnce.Do(func() {
		if f.ef == nil || f.f == nil {
			return
		}
		defer func() { _ = recover() }()
		f.data = f.relocTargets(f.ef)
	})
	return f.data
}

// R_X86_64 relocation types read for code addresses in data
// [x86-64 psABI, 4.4.1 "Relocation Types"].
const (
	rX86_64_64        = 1
	rX86_64_RELATIVE  = 8
	rX86_64_IRELATIVE = 37
)

// shtRELR is SHT_RELR [gABI, "Section Types"], which debug/elf does not
// name.
const shtRELR = elf.SectionType(19)

// relocTargets returns the code addresses that ef's dynamic relocations
// (SHT_RELA sections, and SHT_RELR's packed relative ones) store in data,
// and, for a non-PIE executable, the code addresses its non-executable
// segments hold as aligned 8-byte words.
func (f *File) relocTargets(ef *elf.File) []uint64 {
	var out []uint64
	var dynsyms []elf.Symbol
	dynsymsRead := false
	for _, sec := range ef.Sections {
		switch sec.Type {
		case elf.SHT_RELA:
			data, err := sec.Data()
			if err != nil {
				continue
			}
			for off := 0; off+24 <= len(data); off += 24 {
				info := binary.LittleEndian.Uint64(data[off+8:])
				addend := binary.LittleEndian.Uint64(data[off+16:])
				switch elf.R_X86_64(info & 0xffffffff) {
				case rX86_64_RELATIVE, rX86_64_IRELATIVE:
					if f.isCode(addend) {
						out = append(out, addend)
					}
				case rX86_64_64:
					if !dynsymsRead {
						dynsyms, _ = ef.DynamicSymbols()
						dynsymsRead = true
					}
					// DynamicSymbols drops the null symbol 0.
					if k := int(info>>32) - 1; k >= 0 && k < len(dynsyms) && dynsyms[k].Section != elf.SHN_UNDEF {
						if a := dynsyms[k].Value + addend; f.isCode(a) {
							out = append(out, a)
						}
					}
				}
			}
		case shtRELR:
			out = append(out, f.relrTargets(ef, sec)...)
		}
	}
	if ef.Type == elf.ET_EXEC {
		out = append(out, f.dataWordTargets(ef)...)
	}
	return out
}

// relrTargets decodes a SHT_RELR section (an address word, then bitmaps of
// the words after it) and returns the code addresses stored in the words it
// relocates, whose addends are implicit [gABI, "Relative Relocation
// Table"].
func (f *File) relrTargets(ef *elf.File, sec *elf.Section) []uint64 {
	data, err := sec.Data()
	if err != nil {
		return nil
	}
	var out []uint64
	word := func(at uint64) {
		if v, ok := f.dataWord(ef, at); ok && f.isCode(v) {
			out = append(out, v)
		}
	}
	var where uint64
	for off := 0; off+8 <= len(data); off += 8 {
		e := binary.LittleEndian.Uint64(data[off:])
		if e&1 == 0 {
			word(e)
			where = e + 8
			continue
		}
		for i := uint64(0); i < 63; i++ {
			if e>>(i+1)&1 != 0 {
				word(where + i*8)
			}
		}
		where += 63 * 8
	}
	return out
}

// dataWord reads the 8-byte word at link-time address at from the file
// contents of a PT_LOAD segment.
func (f *File) dataWord(ef *elf.File, at uint64) (uint64, bool) {
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD || at < p.Vaddr || at+8 > p.Vaddr+p.Filesz {
			continue
		}
		var b [8]byte
		if _, err := p.ReadAt(b[:], int64(at-p.Vaddr)); err != nil {
			return 0, false
		}
		return binary.LittleEndian.Uint64(b[:]), true
	}
	return 0, false
}

// maxDataScan bounds the bytes of a non-PIE executable's data read for code
// addresses: past it the data is not scanned (a Go binary's data is tens of
// megabytes at most).
const maxDataScan = 1 << 30

// dataWordTargets returns the aligned 8-byte words of ef's non-executable
// PT_LOAD segments whose values lie in code: in a non-PIE executable the
// linker stores absolute code addresses there without a relocation.
func (f *File) dataWordTargets(ef *elf.File) []uint64 {
	var out []uint64
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_X != 0 || p.Filesz == 0 || p.Filesz > maxDataScan {
			continue
		}
		data := make([]byte, p.Filesz)
		if _, err := p.ReadAt(data, 0); err != nil {
			continue
		}
		start := int((8 - p.Vaddr%8) % 8)
		for off := start; off+8 <= len(data); off += 8 {
			if v := binary.LittleEndian.Uint64(data[off:]); f.isCode(v) {
				out = append(out, v)
			}
		}
	}
	return out
}
