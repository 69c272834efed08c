package cfg

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"golang.org/x/arch/x86/x86asm"
)

// ErrNotMapped reports a read of an address that no loadable segment's
// file contents cover.
var ErrNotMapped = errors.New("address not in any loadable segment")

// An ELFImage is the Image of an x86-64 ELF executable: the file contents
// of its PT_LOAD segments, with R_X86_64_RELATIVE relocations applied (a
// PIE's absolute jump tables, Go -buildmode=pie for one, hold zeros in the
// file and their link-time values in .rela.dyn). It also names PLT stubs.
type ELFImage struct {
	r     io.ReaderAt
	segs  []imageSeg
	relas []relative // sorted by off
	plt   map[uint64]string
	got   map[uint64]string // GOT slot -> the symbol it binds

	data     []dataRange // where CodePointers looks for pointers
	ptrsOnce sync.Once
	ptrs     []uint64 // sorted, unique: code addresses stored in data
}

// A dataRange is a span of the image holding data: an allocated section
// that is not code.
type dataRange struct{ addr, size uint64 }

type imageSeg struct {
	vaddr, filesz, off uint64
	exec               bool
}

type relative struct {
	off, value uint64
}

// R_X86_64_RELATIVE (System V AMD64 ABI, 4.4 Relocation Types): B + A.
const rX86_64Relative = 8

// NewELFImage reads the program headers, relative relocations and PLT of
// the ELF file r. r must stay readable while the image is used. It never
// panics: debug/elf's panics on corrupt input become errors.
func NewELFImage(r io.ReaderAt) (im *ELFImage, err error) {
	defer func() {
		if p := recover(); p != nil {
			im, err = nil, fmt.Errorf("cfg: corrupt ELF file: debug/elf panicked: %v", p)
		}
	}()
	ef, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("cfg: %w", err)
	}
	if ef.Class != elf.ELFCLASS64 || ef.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("cfg: not an x86-64 ELF file (%v %v)", ef.Class, ef.Machine)
	}
	im = &ELFImage{r: r}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && p.Filesz > 0 {
			im.segs = append(im.segs, imageSeg{vaddr: p.Vaddr, filesz: min(p.Filesz, p.Memsz), off: p.Off, exec: p.Flags&elf.PF_X != 0})
		}
	}
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_RELA || s.Flags&elf.SHF_ALLOC == 0 || s.Entsize != 24 {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue // a corrupt relocation section only loses PIE tables
		}
		for i := 0; i+24 <= len(data); i += 24 {
			if binary.LittleEndian.Uint64(data[i+8:])&0xffffffff == rX86_64Relative {
				im.relas = append(im.relas, relative{
					off:   binary.LittleEndian.Uint64(data[i:]),
					value: binary.LittleEndian.Uint64(data[i+16:]),
				})
			}
		}
	}
	sort.Slice(im.relas, func(i, j int) bool { return im.relas[i].off < im.relas[j].off })
	im.got = gotSlots(ef)
	im.plt = pltNames(ef, im.got)
	im.data = dataRanges(ef)
	return im, nil
}

// dataRanges returns where ef keeps data that may hold code addresses: its
// allocated sections of program data and pointer arrays that are not
// code. Without section headers (a stripped file), every loadable segment,
// code too (.rodata may share the text segment): more words that look
// like code addresses, none missed.
func dataRanges(ef *elf.File) []dataRange {
	var out []dataRange
	for _, s := range ef.Sections {
		switch s.Type {
		case elf.SHT_PROGBITS, elf.SHT_INIT_ARRAY, elf.SHT_FINI_ARRAY, elf.SHT_PREINIT_ARRAY:
		default:
			continue
		}
		if s.Flags&elf.SHF_ALLOC != 0 && s.Flags&elf.SHF_EXECINSTR == 0 && s.Size > 0 {
			out = append(out, dataRange{s.Addr, s.Size})
		}
	}
	if len(ef.Sections) > 0 {
		return out
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD && p.Filesz > 0 {
			out = append(out, dataRange{p.Vaddr, min(p.Filesz, p.Memsz)})
		}
	}
	return out
}

// maxPointerScan bounds the bytes of data CodePointers reads, against a
// file whose headers claim gigabytes.
const maxPointerScan = 1 << 30

// CodePointers implements PointerImage: the aligned 8-byte words of the
// image's data, with relative relocations applied, whose values lie in
// [lo, hi) and in code. In a PIE they are the targets of
// R_X86_64_RELATIVE relocations (or RELR's, whose words the file holds),
// in a non-PIE executable the words themselves. The words are read once,
// at the first call; it is safe for concurrent use.
func (im *ELFImage) CodePointers(lo, hi uint64) []uint64 {
	im.ptrsOnce.Do(im.findPointers)
	i := sort.Search(len(im.ptrs), func(i int) bool { return im.ptrs[i] >= lo })
	j := i
	for j < len(im.ptrs) && im.ptrs[j] < hi {
		j++
	}
	return im.ptrs[i:j:j]
}

// findPointers fills im.ptrs from the data ranges.
func (im *ELFImage) findPointers() {
	var out []uint64
	scanned := uint64(0)
	for _, d := range im.data {
		start := (d.addr + 7) &^ 7
		if start >= d.addr+d.size {
			continue
		}
		n := (d.addr + d.size - start) &^ 7
		if scanned += n; scanned > maxPointerScan {
			break
		}
		buf := make([]byte, n)
		if got, err := im.ReadImage(start, buf); err != nil || got != len(buf) {
			continue // NOBITS-like or cut short: nothing stored there
		}
		for off := 0; off+8 <= len(buf); off += 8 {
			if v := binary.LittleEndian.Uint64(buf[off:]); v != 0 && im.IsCode(v) {
				out = append(out, v)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	k := 0
	for i, v := range out {
		if i == 0 || v != out[k-1] {
			out[k] = v
			k++
		}
	}
	im.ptrs = out[:k]
}

// ReadImage implements Image.
func (im *ELFImage) ReadImage(addr uint64, buf []byte) (int, error) {
	for _, s := range im.segs {
		if addr < s.vaddr || addr-s.vaddr >= s.filesz {
			continue
		}
		off := addr - s.vaddr
		if uint64(len(buf)) > s.filesz-off {
			return 0, fmt.Errorf("cfg: read of %d bytes at %#x: %w", len(buf), addr, ErrNotMapped)
		}
		n, err := im.r.ReadAt(buf, int64(s.off+off))
		if n < len(buf) {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return n, fmt.Errorf("cfg: read at %#x: %w", addr, err)
		}
		im.relocate(addr, buf)
		return n, nil
	}
	return 0, fmt.Errorf("cfg: read at %#x: %w", addr, ErrNotMapped)
}

// IsCode implements CodeImage: addr is in an executable segment.
func (im *ELFImage) IsCode(addr uint64) bool {
	for _, s := range im.segs {
		if s.exec && addr >= s.vaddr && addr-s.vaddr < s.filesz {
			return true
		}
	}
	return false
}

// relocate writes the link-time value of every relative relocation that
// lies wholly in buf (at addr).
func (im *ELFImage) relocate(addr uint64, buf []byte) {
	end := addr + uint64(len(buf))
	i := sort.Search(len(im.relas), func(i int) bool { return im.relas[i].off >= addr })
	for ; i < len(im.relas) && im.relas[i].off+8 <= end; i++ {
		binary.LittleEndian.PutUint64(buf[im.relas[i].off-addr:], im.relas[i].value)
	}
}

// PLTName returns the name of the library function a PLT stub at addr
// jumps to ("exit" for exit@plt), or "".
func (im *ELFImage) PLTName(addr uint64) string { return im.plt[addr] }

// GOTName returns the name of the symbol whose address the dynamic linker
// writes in the GOT slot at link-time address slot ("puts" for the slot
// a -fno-plt `call *puts@GOTPCREL(%rip)` reads), or "".
func (im *ELFImage) GOTName(slot uint64) string { return im.got[slot] }

// gotSlots maps every GOT slot a JUMP_SLOT or GLOB_DAT relocation fills
// (in .rela.plt and .rela.dyn) to the symbol it binds.
func gotSlots(ef *elf.File) map[uint64]string {
	slots := map[uint64]string{}
	syms, _ := ef.DynamicSymbols()
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_RELA || s.Entsize != 24 || s.Link == 0 {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		for i := 0; i+24 <= len(data); i += 24 {
			info := binary.LittleEndian.Uint64(data[i+8:])
			typ, sym := elf.R_X86_64(info&0xffffffff), info>>32
			if (typ != elf.R_X86_64_JMP_SLOT && typ != elf.R_X86_64_GLOB_DAT) || sym == 0 || int(sym) > len(syms) {
				continue
			}
			slots[binary.LittleEndian.Uint64(data[i:])] = syms[sym-1].Name
		}
	}
	return slots
}

// pltNames maps every PLT stub (in .plt, .plt.sec and .plt.got) to the
// symbol of the GOT slot its indirect jump reads (slots, gotSlots):
// JUMP_SLOT relocations in .rela.plt, GLOB_DAT ones in .rela.dyn for
// .plt.got. Stubs are decoded rather than counted, so lazy and -z now
// layouts, IBT stubs and .plt.sec all work.
func pltNames(ef *elf.File, slots map[uint64]string) map[uint64]string {
	names := map[uint64]string{}
	if len(slots) == 0 {
		return names
	}
	for _, s := range ef.Sections {
		if s.Name != ".plt" && s.Name != ".plt.sec" && s.Name != ".plt.got" {
			continue
		}
		code, err := s.Data()
		if err != nil {
			continue
		}
		stub := s.Addr // start of the stub being decoded
		for off := 0; off < len(code); {
			inst, n, err := decodeInst(code[off:])
			if err != nil {
				off++
				stub = s.Addr + uint64(off)
				continue
			}
			addr := s.Addr + uint64(off)
			if inst.Op == x86asm.JMP {
				if m, ok := inst.Args[0].(x86asm.Mem); ok && m.Base == x86asm.RIP {
					if name, ok := slots[addr+uint64(n)+uint64(m.Disp)]; ok {
						names[stub] = name
						names[addr] = name
					}
				}
			}
			off += n
			// A stub is sh_entsize (8 or 16) bytes; the next one starts
			// on that boundary, after whatever follows this one's jump.
			if inst.Op == x86asm.JMP {
				stride := 16
				if s.Entsize == 8 {
					stride = 8
				}
				off = (off + stride - 1) &^ (stride - 1)
				stub = s.Addr + uint64(off)
			}
		}
	}
	return names
}
