package symtab

import (
	"errors"
	"fmt"
)

// ErrNotELF reports that a file does not start with a valid ELF header.
var ErrNotELF = errors.New("not an ELF file")

// ErrNotX86_64 reports an ELF file for another class or machine than
// 64-bit x86-64, the only target patchprof patches.
var ErrNotX86_64 = errors.New("not an x86-64 ELF executable")

// ErrNotExecutable reports an x86-64 ELF file that is neither ET_EXEC nor
// ET_DYN (a relocatable object or a core file), which cannot be run.
var ErrNotExecutable = errors.New("not an executable ELF file")

// ErrNoSymbols reports an executable without any function symbol in
// .symtab or .dynsym. symtab.Open does not return it (an executable without
// symbols can still be profiled by lines); callers that need functions
// return it wrapped, with a hint to rebuild without -s.
var ErrNoSymbols = errors.New("no function symbols")

// A FormatError reports an executable that symtab cannot use: not ELF,
// not x86-64, or corrupt. Err is one of the sentinels of this package or the
// underlying debug/elf error; Msg gives the detail (for example the class
// and machine found).
type FormatError struct {
	Path string // the file as given to Open
	Err  error  // ErrNotELF, ErrNotX86_64, ErrNotExecutable or a debug/elf error
	Msg  string // detail, may be empty
}

// Error implements error.
func (e *FormatError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s: %v: %s", e.Path, e.Err, e.Msg)
}

// Unwrap returns the underlying error, so errors.Is(err, ErrNotELF) works.
func (e *FormatError) Unwrap() error { return e.Err }

// A DecodeError reports the first byte sequence InstructionStarts could not
// decode as an x86-64 instruction.
type DecodeError struct {
	Addr uint64 // link-time address of the undecodable instruction
	Err  error  // the x86asm error (for example x86asm.ErrTruncated)
}

// Error implements error.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("cannot decode x86-64 instruction at %#x: %v", e.Addr, e.Err)
}

// Unwrap returns the decoder's error.
func (e *DecodeError) Unwrap() error { return e.Err }
