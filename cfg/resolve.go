package cfg

import "github.com/patchprof/patchprof/symtab"

// CalleeNames returns a function for Options.CalleeName that names a call
// or jump target from the executable's symbols: the function starting at
// the address (symtab), or the library function of a PLT stub (im, which
// may be nil).
func CalleeNames(st *symtab.File, im *ELFImage) func(addr uint64) string {
	return func(addr uint64) string {
		if i, ok := st.FuncAt(addr); ok && st.Funcs[i].Addr == addr {
			return st.Funcs[i].Name
		}
		if im != nil {
			return im.PLTName(addr)
		}
		return ""
	}
}
