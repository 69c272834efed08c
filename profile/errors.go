package profile

import (
	"errors"
	"strings"
)

// ErrVersion means a profile was written in a format version this package
// does not read. Load wraps it in a message naming the file's version and
// the supported one.
var ErrVersion = errors.New("unsupported profile format version")

// A FormatError reports a profile that is not valid JSON or does not follow
// the schema: a missing or malformed field, or an inconsistent value.
type FormatError struct {
	// Path is the file the profile was read from ("" when decoded from a
	// reader).
	Path string
	// Field locates the problem in the JSON ("lines[3].line"), "" when the
	// problem is the document as a whole.
	Field string
	// Msg says what is wrong.
	Msg string
	// Err is the underlying error, if any (a *json.SyntaxError,
	// io.ErrUnexpectedEOF, ...).
	Err error
}

// Error implements error: "PATH: bad profile: FIELD: MSG: ERR".
func (e *FormatError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString("bad profile")
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *FormatError) Unwrap() error { return e.Err }
