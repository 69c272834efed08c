package profiler

import "github.com/patchprof/patchprof/symtab"

// The sampled address of a chain can lie in a file that is not counted
// (the C library's strlen, called from counted code): its time is outside
// the counted code, but the callers' inclusive time holds it, so the
// chain keeps a frame for it, named by the file's own ELF symbols (as perf
// names a library's frames without debug information).

// An outsidePlace is a sampled address in an outside file.
type outsidePlace struct {
	path string
	addr uint64 // link-time
	name string // the symbol holding addr, "" if none
}

// readOutside reads path's segments and function symbols (.dynsym when
// it has no .symtab, as a system library has not); nil when it is no x86-64
// ELF file. Neither LinkAddr nor FuncAt reads code, so the file is closed
// at once.
func readOutside(path string) *symtab.File {
	f, err := symtab.Open(path)
	if err != nil {
		return nil
	}
	f.Close()
	return f
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
	addr, ok := of.LinkAddr(pc - m.lo + m.off)
	if !ok {
		return outsidePlace{}, false
	}
	place := outsidePlace{path: m.path, addr: addr}
	if i, ok := of.FuncAt(addr); ok {
		place.name = of.Funcs[i].Name
	}
	return place, true
}
