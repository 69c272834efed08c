// Package symtab reads what patchprof needs from an x86-64 ELF executable:
// its function symbols, the bytes of its executable segments, its entry
// point and build ID, and the instruction boundaries of a run of code.
//
// symtab owns the ELF view of the executable: which addresses are code,
// which function contains an address, and where instructions start (so a
// breakpoint is never planted in the middle of an instruction). It does not
// own source lines (package lineinfo), the breakpoint site table (package
// breakpoint) or anything about a running process: every address here is a
// link-time address, and the monitor adds the load bias of a PIE itself.
//
// symtab is pure Go and builds on every OS. It never panics on a corrupt
// file: debug/elf can panic on some malformed inputs, so Open recovers and
// returns a *FormatError instead.
package symtab
