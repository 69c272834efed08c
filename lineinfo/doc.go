// Package lineinfo reads the DWARF line table (.debug_line) of an
// executable: which machine addresses begin which source lines. patchprof
// plants a breakpoint at every statement row (Table.Rows) and names the
// source line of a crash PC (Table.Lookup).
//
// lineinfo owns the line table only. It does not know functions or code
// bytes (package symtab), and it does not decide which rows become
// breakpoints (package breakpoint drops rows that are not instruction
// starts or not in code). Addresses are link-time addresses.
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
// program itself ([DWARF5 6.2.5], about a hundred and fifty lines in
// program.go and state.go) from the prologue values delve decoded. That gives every row with its is_stmt
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
package lineinfo
