package lineinfo

import (
	"errors"
	"fmt"
)

// ErrNoLineInfo reports an executable without a DWARF line table, or with
// one that has no rows. Read wraps it in a message that says to rebuild
// with -g or profile functions only.
var ErrNoLineInfo = errors.New("no DWARF line information")

// A DecodeError reports a corrupt DWARF section.
type DecodeError struct {
	Section string // for example ".debug_line"
	Offset  uint64 // byte offset in the (decompressed) section
	Msg     string
}

// Error implements error.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("corrupt DWARF %s at offset %#x: %s", e.Section, e.Offset, e.Msg)
}
