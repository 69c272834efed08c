package symtab

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// A File is an opened x86-64 ELF executable.
type File struct {
	Path    string   // absolute path of the executable
	Type    elf.Type // elf.ET_EXEC, or elf.ET_DYN for a PIE (or shared object)
	Entry   uint64   // e_entry, a link-time address
	BuildID string   // hex of NT_GNU_BUILD_ID, else the Go build ID string, else ""

	// Funcs are the functions of .symtab (or of .dynsym when the binary is
	// stripped) that lie in an executable PT_LOAD segment, sorted by Addr,
	// one per address.
	Funcs []Func

	f    *os.File
	ef   *elf.File // kept for Targets, which reads relocations and data lazily
	segs []*segment

	symAddrs    []uint64 // every symbol's address in code, for Targets
	targetsOnce sync.Once
	targets     *Targets
	targetsDone atomic.Bool // targets is set
	dataOnce    sync.Once
	data        []uint64 // code addresses found in data (dataTargets)
	takenOnce   sync.Once
	taken       []uint64 // sorted function entries whose address is taken (AddressTaken)
}

// A Func is one function: a start address with every symbol naming it.
type Func struct {
	Name    string   // preferred name: global and not starting with '_' when there is one
	Aliases []string // the other names at Addr, sorted; nil when there are none
	Addr    uint64   // link-time start address
	Size    uint64   // st_size, or the distance to the next function when st_size is 0
}

// A segment is one executable PT_LOAD program header. Its file bytes are
// read once, on the first Code call that needs them.
type segment struct {
	vaddr, memsz uint64
	off, filesz  uint64
	once         sync.Once
	data         []byte // file contents, len filesz; nil when unreadable
}

func (s *segment) end() uint64 { return s.vaddr + s.memsz }

// Open opens the executable at path and reads its symbols. The returned
// File keeps the file open (Code reads segment bytes from it) until Close.
//
// Errors: the os error (wrapped) when path cannot be opened; a *FormatError
// wrapping ErrNotELF, ErrNotX86_64, ErrNotExecutable or the debug/elf error
// for a corrupt file. An executable without function symbols is not an
// error: Funcs is then empty.
func Open(path string) (*File, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("symtab: %w", err)
	}
	osf, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("symtab: %w", err)
	}
	f, err := newFile(osf, path)
	if err != nil {
		return nil, errors.Join(err, osf.Close())
	}
	f.Path = filepath.Clean(abs)
	f.f = osf
	return f, nil
}

// Close closes the underlying file. Code must not be called after Close for
// segments it has not read yet.
func (f *File) Close() error {
	if f.f == nil {
		return nil
	}
	err := f.f.Close()
	f.f = nil
	return err
}

// checkIdent validates the ELF identification and machine before handing
// the file to debug/elf, so that the common mistakes (a script, a 32-bit or
// arm64 binary) get a precise message. [ELF gABI, "ELF Identification"]
func checkIdent(r io.ReaderAt, path string) error {
	var hdr [20]byte
	n, err := r.ReadAt(hdr[:], 0)
	if n < 4 || string(hdr[:4]) != elf.ELFMAG {
		msg := "file does not start with \\x7fELF"
		if err != nil && !errors.Is(err, io.EOF) {
			return &FormatError{Path: path, Err: err}
		}
		return &FormatError{Path: path, Err: ErrNotELF, Msg: msg}
	}
	if n < len(hdr) {
		return &FormatError{Path: path, Err: ErrNotELF, Msg: "truncated ELF header"}
	}
	class := elf.Class(hdr[elf.EI_CLASS])
	var order binary.ByteOrder
	switch elf.Data(hdr[elf.EI_DATA]) {
	case elf.ELFDATA2LSB:
		order = binary.LittleEndian
	case elf.ELFDATA2MSB:
		order = binary.BigEndian
	default:
		return &FormatError{Path: path, Err: ErrNotELF, Msg: fmt.Sprintf("invalid data encoding %d", hdr[elf.EI_DATA])}
	}
	// e_machine sits at offset 18 in both ELF32 and ELF64 headers.
	machine := elf.Machine(order.Uint16(hdr[18:20]))
	var bits string
	switch class {
	case elf.ELFCLASS32:
		bits = "32-bit"
	case elf.ELFCLASS64:
		bits = "64-bit"
	default:
		return &FormatError{Path: path, Err: ErrNotELF, Msg: fmt.Sprintf("invalid ELF class %d", hdr[elf.EI_CLASS])}
	}
	if class != elf.ELFCLASS64 || machine != elf.EM_X86_64 {
		return &FormatError{Path: path, Err: ErrNotX86_64, Msg: fmt.Sprintf("found %s %v", bits, machine)}
	}
	if order != binary.LittleEndian {
		return &FormatError{Path: path, Err: ErrNotX86_64, Msg: "found big-endian EM_X86_64"}
	}
	return nil
}

// parseELF runs debug/elf, turning its panics on corrupt headers into
// errors.
func parseELF(r io.ReaderAt) (ef *elf.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			ef, err = nil, fmt.Errorf("debug/elf panicked: %v", p)
		}
	}()
	return elf.NewFile(r)
}

func newFile(r *os.File, path string) (f *File, err error) {
	if err := checkIdent(r, path); err != nil {
		return nil, err
	}
	ef, err := parseELF(r)
	if err != nil {
		return nil, &FormatError{Path: path, Err: err, Msg: "corrupt ELF file"}
	}
	if ef.Type != elf.ET_EXEC && ef.Type != elf.ET_DYN {
		return nil, &FormatError{Path: path, Err: ErrNotExecutable, Msg: fmt.Sprintf("ELF type %v", ef.Type)}
	}
	// Later steps read sections and symbols, which debug/elf parses lazily
	// and may also panic on.
	defer func() {
		if p := recover(); p != nil {
			f, err = nil, &FormatError{Path: path, Err: fmt.Errorf("debug/elf panicked: %v", p), Msg: "corrupt ELF file"}
		}
	}()
	var size uint64
	if st, err := r.Stat(); err == nil {
		size = uint64(st.Size())
	}
	f = &File{Type: ef.Type, Entry: ef.Entry}
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD || p.Flags&elf.PF_X == 0 || p.Memsz == 0 {
			continue
		}
		s := &segment{vaddr: p.Vaddr, memsz: p.Memsz, off: p.Off, filesz: min(p.Filesz, p.Memsz)}
		if s.vaddr+s.memsz < s.vaddr {
			continue // wraps around the address space: corrupt
		}
		if s.off > size || s.filesz > size-s.off {
			// Corrupt or truncated: never allocate what the file cannot hold.
			s.filesz = 0
		}
		f.segs = append(f.segs, s)
	}
	f.BuildID = buildID(ef)
	syms, err := ef.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) || (err == nil && !hasFuncs(syms)) {
		// A stripped binary still names its exported functions in .dynsym.
		syms, err = ef.DynamicSymbols()
		if errors.Is(err, elf.ErrNoSymbols) {
			syms, err = nil, nil
		}
	}
	if err != nil {
		return nil, &FormatError{Path: path, Err: err, Msg: "corrupt symbol table"}
	}
	f.Funcs = f.funcs(syms)
	f.symAddrs = f.symbolTargets(syms)
	f.ef = ef
	return f, nil
}

func isFunc(s *elf.Symbol) bool {
	t := elf.ST_TYPE(s.Info)
	return (t == elf.STT_FUNC || t == elf.STT_GNU_IFUNC) &&
		s.Section != elf.SHN_UNDEF && s.Section < elf.SHN_LORESERVE
}

func hasFuncs(syms []elf.Symbol) bool {
	for i := range syms {
		if isFunc(&syms[i]) {
			return true
		}
	}
	return false
}

// segmentOf returns the executable segment whose memory image holds addr.
func (f *File) segmentOf(addr uint64) *segment {
	for _, s := range f.segs {
		if addr >= s.vaddr && addr < s.end() {
			return s
		}
	}
	return nil
}

// nameRank orders the names at one address: the lowest rank becomes
// Func.Name. Global names the programmer wrote (malloc) beat weak ones and
// implementation names (__libc_malloc).
func nameRank(s *elf.Symbol) int {
	r := 0
	switch elf.ST_BIND(s.Info) {
	case elf.STB_GLOBAL:
	case elf.STB_WEAK:
		r = 1
	default:
		r = 2
	}
	if strings.HasPrefix(s.Name, "_") {
		r += 3
	}
	return r
}

// structorVariant orders two names of one C++ constructor or destructor
// that differ only in its variant: the base-object one (C2, D2) first, the
// body GCC emits and names in its coverage notes, the complete-object one
// (C1, D1) an alias of it when the class has no virtual base [Itanium C++
// ABI 5.1.4.3]. It returns 0 for any other pair.
func structorVariant(a, b string) int {
	if len(a) != len(b) {
		return 0
	}
	k := 0
	for k < len(a) && a[k] == b[k] {
		k++
	}
	if k == 0 || k == len(a) || a[k+1:] != b[k+1:] || (a[k-1] != 'C' && a[k-1] != 'D') {
		return 0
	}
	switch {
	case a[k] == '2' && b[k] == '1':
		return -1
	case a[k] == '1' && b[k] == '2':
		return 1
	}
	return 0
}

func (f *File) funcs(syms []elf.Symbol) []Func {
	// A C library has thousands of function symbols, sorted at every start
	// of a target that loads it: a generic sort on a precomputed rank, not
	// sort.SliceStable's reflection, keeps that under a millisecond.
	type ranked struct {
		s    *elf.Symbol
		rank int
	}
	cand := make([]ranked, 0, len(syms))
	for i := range syms {
		s := &syms[i]
		if !isFunc(s) || s.Name == "" || f.segmentOf(s.Value) == nil {
			continue
		}
		cand = append(cand, ranked{s, nameRank(s)})
	}
	slices.SortStableFunc(cand, func(a, b ranked) int {
		if c := cmp.Compare(a.s.Value, b.s.Value); c != 0 {
			return c
		}
		if c := cmp.Compare(a.rank, b.rank); c != 0 {
			return c
		}
		if c := structorVariant(a.s.Name, b.s.Name); c != 0 {
			return c
		}
		return strings.Compare(a.s.Name, b.s.Name)
	})
	out := make([]Func, 0, len(cand))
	for i := 0; i < len(cand); {
		j := i
		fn := Func{Name: cand[i].s.Name, Addr: cand[i].s.Value, Size: cand[i].s.Size}
		for j++; j < len(cand) && cand[j].s.Value == fn.Addr; j++ {
			fn.Size = max(fn.Size, cand[j].s.Size)
			if n := cand[j].s.Name; n != fn.Name && !contains(fn.Aliases, n) {
				fn.Aliases = append(fn.Aliases, n)
			}
		}
		slices.Sort(fn.Aliases)
		out = append(out, fn)
		i = j
	}
	for i := range out {
		fn := &out[i]
		seg := f.segmentOf(fn.Addr)
		limit := seg.end()
		if fn.Size == 0 {
			// Hand-written assembly often has no st_size: the function runs
			// to the next symbol, or to the end of its segment.
			if i+1 < len(out) && out[i+1].Addr < limit {
				limit = out[i+1].Addr
			}
			fn.Size = limit - fn.Addr
		} else if fn.Size > limit-fn.Addr {
			fn.Size = limit - fn.Addr // clip a size that spills out of the segment
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// FuncAt returns the index in f.Funcs of the function whose
// [Addr, Addr+Size) holds addr.
func (f *File) FuncAt(addr uint64) (int, bool) {
	i := sort.Search(len(f.Funcs), func(i int) bool { return f.Funcs[i].Addr > addr }) - 1
	if i < 0 || addr-f.Funcs[i].Addr >= f.Funcs[i].Size {
		return 0, false
	}
	return i, true
}

// Code returns the n bytes of the file at link-time address addr. ok is
// false unless all of them lie in the file contents of one executable
// PT_LOAD segment (the zero-filled tail beyond p_filesz has no file bytes).
// The returned slice is shared with the File and must not be modified.
func (f *File) Code(addr uint64, n int) ([]byte, bool) {
	if n < 0 {
		return nil, false
	}
	s := f.segmentOf(addr)
	if s == nil {
		return nil, false
	}
	off := addr - s.vaddr
	if off > s.filesz || uint64(n) > s.filesz-off {
		return nil, false
	}
	s.once.Do(func() {
		if f.f == nil || s.filesz == 0 {
			return
		}
		buf := make([]byte, s.filesz)
		if _, err := f.f.ReadAt(buf, int64(s.off)); err == nil {
			s.data = buf
		}
	})
	if s.data == nil {
		return nil, false
	}
	return s.data[off : off+uint64(n) : off+uint64(n)], true
}

// LinkAddr returns the link-time address of byte off of the file, when off
// lies in an executable PT_LOAD segment. A mapping of the file seen in
// /proc/PID/maps at runtime address start with file offset off then has load
// bias start - LinkAddr(off): that is how a shared library's (or an exec'd
// program's) sites are placed, whatever address the loader chose.
// [ELF gABI, "Program Header": p_vaddr and p_offset are congruent modulo the
// page size]
func (f *File) LinkAddr(off uint64) (uint64, bool) {
	for _, s := range f.segs {
		lo := s.off &^ (pageSize - 1)
		if off >= lo && off < s.off+s.filesz {
			return s.vaddr - (s.off - off), true
		}
	}
	return 0, false
}

// pageSize is the x86-64 Linux page size, the granularity of mappings.
const pageSize = 4096

// ExportsFunc reports whether the ELF file at path exports a function named
// name in its dynamic symbol table. It reads only .dynsym, for the caller
// that must find one symbol in a library it otherwise leaves alone (the
// dynamic linker's notification point) without paying for Open's sorted
// function table; a file it cannot read exports nothing.
func ExportsFunc(path, name string) bool {
	_, ok := exported(path, name, isFunc)
	return ok
}

// ExportedObject returns the link-time address of the data object named
// name that the ELF file at path exports (the dynamic linker's _r_debug),
// reading only .dynsym as ExportsFunc does.
func ExportedObject(path, name string) (uint64, bool) {
	return exported(path, name, func(s *elf.Symbol) bool {
		return elf.ST_TYPE(s.Info) == elf.STT_OBJECT && s.Section != elf.SHN_UNDEF && s.Section < elf.SHN_LORESERVE
	})
}

// exported looks name up in the dynamic symbols of the file at path, for a
// symbol accept takes.
func exported(path, name string, accept func(*elf.Symbol) bool) (uint64, bool) {
	osf, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer osf.Close()
	if checkIdent(osf, path) != nil {
		return 0, false
	}
	ef, err := parseELF(osf)
	if err != nil {
		return 0, false
	}
	if v, found, ok := exportsHashed(ef, name, accept); ok {
		return v, found
	}
	return exports(ef, name, accept)
}

// exports looks name up in ef's dynamic symbols, reading the raw entries
// in place: DynamicSymbols makes a string and a version of each of a C
// library's thousands of symbols, for the one wanted. A corrupt table
// reads as not found.
func exports(ef *elf.File, name string, accept func(*elf.Symbol) bool) (value uint64, found bool) {
	defer func() {
		if recover() != nil {
			value, found = 0, false
		}
	}()
	ds := ef.SectionByType(elf.SHT_DYNSYM)
	if ds == nil || ds.Link == 0 || int(ds.Link) >= len(ef.Sections) {
		return 0, false
	}
	syms, err := ds.Data()
	if err != nil {
		return 0, false
	}
	strs, err := ef.Sections[ds.Link].Data()
	if err != nil {
		return 0, false
	}
	const symSize = 24 // Elf64_Sym
	for off := symSize; off+symSize <= len(syms); off += symSize {
		e := syms[off : off+symSize]
		nameOff := int(binary.LittleEndian.Uint32(e[0:]))
		if nameOff >= len(strs) || len(strs)-nameOff <= len(name) ||
			strs[nameOff+len(name)] != 0 || string(strs[nameOff:nameOff+len(name)]) != name {
			continue
		}
		sym := elf.Symbol{Info: e[4], Section: elf.SectionIndex(binary.LittleEndian.Uint16(e[6:])), Value: binary.LittleEndian.Uint64(e[8:])}
		if accept(&sym) {
			return sym.Value, true
		}
	}
	return 0, false
}

// ImportsFunc reports whether the ELF file at path imports a function
// named name: an undefined symbol of its dynamic symbol table, bound at
// run time to another module's. A file it cannot read imports nothing.
func ImportsFunc(path, name string) bool {
	osf, err := os.Open(path)
	if err != nil {
		return false
	}
	defer osf.Close()
	if checkIdent(osf, path) != nil {
		return false
	}
	ef, err := parseELF(osf)
	if err != nil {
		return false
	}
	_, found := exports(ef, name, func(s *elf.Symbol) bool { return s.Section == elf.SHN_UNDEF })
	return found
}

// HasSection reports whether the file has a section named name.
func (f *File) HasSection(name string) bool {
	return f.ef != nil && f.ef.Section(name) != nil
}
