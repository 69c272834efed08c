// Package lineinfo reads the DWARF line table (.debug_line) of an
// executable: which machine addresses begin which source lines. patchprof
// plants a breakpoint at every statement row (Table.Rows) and names the
// source line of a crash PC or a time sample (Table.Lookup). It also reads
// what .debug_info says about each function's source beyond its rows
// (Subprograms): its declaration line, goto labels with code, stack-frame
// locals, language and producer, which the line counts need to match
// gcov's.
//
// lineinfo owns the DWARF view of the sources only. It does not know
// function symbols or code bytes (package symtab), and it does not decide
// which rows become breakpoints (package breakpoint drops rows that are
// not instruction starts or not in code). Addresses are link-time
// addresses.
//
// # How delve's pkg/dwarf/line is used, and why not all of it
//
// The design names github.com/go-delve/delve/pkg/dwarf/line as the parser.
// Its exported API parses each unit's header (line.Parse: prologue,
// directory and file tables for DWARF 2 to 5, DW_FORM_line_strp strings)
// but has no row iterator: its state machine is unexported, and the
// exported walks each drop something patchprof needs. AllPCsForFileLines
// and AllPCsBetween keep one PC per address (so two lines starting at one
// address lose one) and report end_sequence rows as ordinary rows;
// LineToPCs and PCToLine rescan the whole unit per query (quadratic over a
// large Go binary) and never expose sequence ends.
//
// So lineinfo uses delve for what it does well, the unit header and file
// table (line.Parse, one call per unit), and executes the line-number
// program itself ([DWARF5 6.2.5], in program.go and state.go) from the
// prologue values delve decoded. That gives every row with its is_stmt
// flag and every end_sequence, in one pass. debug/dwarf's LineReader could
// run the program too, but it needs the unit's .debug_info entry, so it
// could not be fuzzed on .debug_line bytes alone.
//
// Two things are added around delve's header parse:
//
//   - A bounds check of the header before delve sees it (checkHeader):
//     delve trusts the DWARF 5 directory and file counts (a corrupt count
//     makes it allocate or loop without end, which recover cannot stop)
//     and indexes past short buffers (which panics). Remaining panics are
//     recovered, and delve's log messages, which it uses instead of errors,
//     become a *DecodeError.
//   - The MD5 digest of each DWARF 5 file entry (DW_LNCT_MD5, Table.MD5),
//     which delve parses and drops, is kept by checkHeader's walk of the
//     file table.
//   - A fix for DWARF 5 file entries whose format lists a field after
//     DW_LNCT_directory_index (clang's DW_LNCT_MD5): delve forgets the
//     directory index in that case and leaves the path relative, so
//     lineinfo joins it with the directory itself.
//
// Beyond the raw table, Rows leave out what no breakpoint can count: rows
// at line 0, zero-length rows at their sequence's end address, and whole
// sequences the linker discarded (start address 0 or lld's -1/-2
// tombstones).
//
// Relative paths are joined with the compile unit's DW_AT_comp_dir, read
// with debug/dwarf from .debug_info; DWARF 5 headers already carry the
// compilation directory as directory 0. Compressed sections (SHF_COMPRESSED,
// or the older .zdebug_ sections) are decompressed.
//
// # Files
//
//	read.go: Read and ReadWith, the compile units' DW_AT_comp_dir, ELF
//	    opening and section reading that never panic
//	table.go: Table and Row: Lookup, LookupRead, RowsIn, GoRoot
//	gostd.go: ReadOptions.DeferGoStd, a Go program's runtime and standard
//	    library units left unrun until Lookup needs them
//	program.go: splitting .debug_line into units, delve's header parse, and
//	    running each unit's line-number program
//	state.go: the line-number state machine and a unit's file table
//	header.go: checkHeader, the bounds check of a unit header before delve
//	    reads it
//	reader.go: the sticky-error reader of DWARF values
//	sections.go: the debug sections read and inflated once, and the
//	    *dwarf.Data built from them
//	dwarfcache.go: the *dwarf.Data Read hands to Subprograms on one file
//	encode.go: a Table's and the Subprograms' encodings for patchprof's
//	    analysis cache (MarshalBinary, UnmarshalTable, MarshalSubprograms,
//	    UnmarshalSubprograms)
//	errors.go: ErrNoLineInfo and DecodeError
//
//	subprogram.go: Subprogram, Label, IsC, Subprograms and SubprogramAt
//	locals.go: Local, the stack-frame variables of each subprogram
package lineinfo
