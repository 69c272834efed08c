package profiler

import (
	"debug/elf"
	"sort"
)

// The sampled address of a chain can lie in a file that is not counted
// (the C library's strlen, called from counted code): its time is outside
// the counted code, but the callers' inclusive time holds it, so the
// chain keeps a frame for it, named by the file's own ELF symbols (as perf
// names a library's frames without debug information).

// An outsideFile is what the timeline reads of a file that is not counted:
// its loadable segments, to turn a file offset into a link-time address,
// and its function symbols, by address.
type outsideFile struct {
	loads []elf.ProgHeader
	funcs []outsideFunc // sorted by addr
}

// An outsideFunc is one function symbol of an outside file.
type outsideFunc struct {
	addr, size uint64
	name       string
}

// An outsidePlace is a sampled address in an outside file.
type outsidePlace struct {
	path string
	addr uint64 // link-time
	name string // the symbol holding addr, "" if none
}

// readOutside reads path's segments and function symbols (.symtab and
// .dynsym alike; a system library often has only the latter); nil when it
// is no ELF file.
func readOutside(path string) *outsideFile {
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	of := &outsideFile{}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			of.loads = append(of.loads, p.ProgHeader)
		}
	}
	seen := map[uint64]bool{}
	add := func(syms []elf.Symbol) {
		for _, s := range syms {
			t := elf.ST_TYPE(s.Info)
			if (t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC) || s.Value == 0 || s.Size == 0 || s.Section == elf.SHN_UNDEF || seen[s.Value] {
				continue
			}
			seen[s.Value] = true
			of.funcs = append(of.funcs, outsideFunc{s.Value, s.Size, s.Name})
		}
	}
	if syms, err := f.Symbols(); err == nil {
		add(syms)
	}
	if syms, err := f.DynamicSymbols(); err == nil {
		add(syms)
	}
	sort.Slice(of.funcs, func(i, j int) bool { return of.funcs[i].addr < of.funcs[j].addr })
	return of
}

// linkAddr returns the link-time address of file offset off: false when no
// loadable segment holds it.
func (of *outsideFile) linkAddr(off uint64) (uint64, bool) {
	for _, p := range of.loads {
		if off >= p.Off && off < p.Off+p.Filesz {
			return off - p.Off + p.Vaddr, true
		}
	}
	return 0, false
}

// name returns the function symbol holding link-time address addr, ""
// when none does.
func (of *outsideFile) name(addr uint64) string {
	k := sort.Search(len(of.funcs), func(k int) bool { return of.funcs[k].addr > addr }) - 1
	// An earlier, larger symbol may hold addr past a smaller one: look
	// back a few.
	for n := 0; k >= 0 && n < 8; k, n = k-1, n+1 {
		if f := of.funcs[k]; addr < f.addr+f.size {
			return f.name
		}
	}
	return ""
}

// outsidePlace returns where runtime address pc of process pid lies in a
// file that is not counted, read once per file; false when no executable
// file mapping holds it (anonymous code, the vDSO, an exited process).
// Called with tl.mu held.
func (tl *timeline) outsidePlace(pid int, pc uint64) (outsidePlace, bool) {
	m, ok := tl.foreignMapping(pid, pc)
	if !ok {
		return outsidePlace{}, false
	}
	of, ok := tl.outsideFiles[m.path]
	if !ok {
		of = readOutside(m.path)
		tl.outsideFiles[m.path] = of
	}
	if of == nil {
		return outsidePlace{}, false
	}
	addr, ok := of.linkAddr(pc - m.lo + m.off)
	if !ok {
		return outsidePlace{}, false
	}
	return outsidePlace{path: m.path, addr: addr, name: of.name(addr)}, true
}
