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
//
// Files:
//
//	symtab.go: File, Func and Open: the sorted function table (FuncAt),
//	    code bytes by link-time address (Code, LinkAddr), and the look-ups
//	    in .dynsym alone (ExportsFunc, ExportedObject)
//	gnuhash.go: those look-ups through the GNU hash table, as ld.so does
//	buildid.go: the build ID from the GNU or Go build ID note
//	errors.go: ErrNotELF, ErrNotX86_64, ErrNotExecutable, ErrNoSymbols,
//	    FormatError and DecodeError
//
//	decode.go: InstructionStarts (linear decoding), DecodeInst over
//	    x86asm, and the ENDBR and VZEROUPPER tests
//	insnlen.go: instruction lengths and branch displacements from the
//	    opcode maps, without a full decode
//	linscan.go: ScanJumps, a function's in-function jump targets from the
//	    lengths alone, or no answer where a flow graph would know more
//	taken.go: AddressTaken, the function entries whose address the
//	    module may take, which alone its own indirect calls can enter
//	targets.go: Targets, every address control may reach other than by
//	    falling through (symbols, direct branches, code addresses in data)
//	callsite.go: IsReturnAddress, whether an address follows a call
package symtab
