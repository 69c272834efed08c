package cfg

import (
	"errors"
	"fmt"
)

// The reasons a function's flow cannot be recovered. An *Error wraps one
// of them, so errors.Is(err, cfg.ErrJumpTable) works; Reason returns its
// short name for tallies.
var (
	// ErrUndecodable: control reaches bytes that do not decode as an
	// x86-64 instruction.
	ErrUndecodable = errors.New("undecodable instruction")
	// ErrTruncated: the function ends in the middle of an instruction.
	ErrTruncated = errors.New("function ends mid-instruction")
	// ErrMidInstruction: a branch or a jump-table entry targets a byte
	// inside another instruction (overlapping instructions).
	ErrMidInstruction = errors.New("branch into the middle of an instruction")
	// ErrFallsOff: control runs past the end of the function without a
	// branch, return or call.
	ErrFallsOff = errors.New("control falls off the end of the function")
	// ErrJumpTable: an indirect jump whose targets cannot be found (not a
	// recognised switch table, a table without a bound, an unreadable
	// table or an entry outside the function).
	ErrJumpTable = errors.New("indirect jump without a recoverable jump table")
	// ErrData: bytes that no control flow reaches and that are not
	// padding (nop or int3): data in the text, or unreachable code.
	ErrData = errors.New("unreached bytes that are not padding (data in text?)")
	// ErrEmpty: the function has no code bytes.
	ErrEmpty = errors.New("no code")
)

// An Error reports a function whose control flow cannot be recovered. The
// function must be left out of block counting: nothing in it is guessed.
type Error struct {
	Func   string // the function's name as given in Options.Name
	Addr   uint64 // link-time address of the offending instruction or byte
	Err    error  // one of the Err* sentinels of this package
	Detail string // more detail, may be empty
}

// Error implements error.
func (e *Error) Error() string {
	name := e.Func
	if name == "" {
		name = "function"
	}
	if e.Detail == "" {
		return fmt.Sprintf("cfg: %s: %v at %#x", name, e.Err, e.Addr)
	}
	return fmt.Sprintf("cfg: %s: %v at %#x: %s", name, e.Err, e.Addr, e.Detail)
}

// Unwrap returns the sentinel, so errors.Is works.
func (e *Error) Unwrap() error { return e.Err }

// Reason returns the short name of e's sentinel, for tallies such as
// "3 functions not recoverable: 2 jump-table, 1 data".
func (e *Error) Reason() string {
	switch e.Err {
	case ErrUndecodable:
		return "undecodable"
	case ErrTruncated:
		return "truncated"
	case ErrMidInstruction:
		return "mid-instruction"
	case ErrFallsOff:
		return "falls-off-end"
	case ErrJumpTable:
		return "jump-table"
	case ErrData:
		return "data"
	case ErrEmpty:
		return "empty"
	}
	return "other"
}
