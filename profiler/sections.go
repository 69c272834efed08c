package profiler

import (
	"debug/elf"

	"github.com/patchprof/patchprof/symtab"
)

// clipToSections ends each function of sym at the end of the executable
// section holding its entry. A function whose symbol has no st_size
// (crti.o's _init and _fini, hand-written assembly) is given the distance
// to the next symbol, which in a gcc program runs past .init into the
// symbol-less .plt: the control-flow recovery then took the PLT for data
// after _init's ret ("unreached bytes that are not padding"), where there
// is only .init's zero fill. A function never spans two sections (ELF
// gABI, "Sections": a section's contents are one unit of the link), so the
// clip only ever removes bytes that are not the function's. A file
// without section headers (sstrip) keeps the sizes symtab gave.
func clipToSections(sym *symtab.File) {
	f, err := elf.Open(sym.Path)
	if err != nil {
		return
	}
	defer f.Close()
	var text []*elf.Section
	for _, s := range f.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_ALLOC != 0 && s.Flags&elf.SHF_EXECINSTR != 0 {
			text = append(text, s)
		}
	}
	for i := range sym.Funcs {
		fn := &sym.Funcs[i]
		for _, s := range text {
			if fn.Addr >= s.Addr && fn.Addr < s.Addr+s.Size {
				if end := s.Addr + s.Size; fn.Addr+fn.Size > end {
					fn.Size = end - fn.Addr
				}
				break
			}
		}
	}
}
