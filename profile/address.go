package profile

import (
	"strconv"
	"strings"
)

// An Address is a code address in a profile: link-time in the executable or
// the module it belongs to (as readelf and objdump print it), or the runtime
// address of an Exit.PC outside every module.
//
// The model holds it as a number so that sorting, merging and exporting
// compare and key addresses without parsing text. In JSON it is a string of
// lower-case hex with a 0x prefix ("0x401136"): a reader can match it
// against objdump output, and 64-bit values survive JSON readers that hold
// numbers as doubles.
type Address uint64

// String returns a in the profile's notation: lower-case hex with a 0x
// prefix ("0x401136").
func (a Address) String() string {
	return "0x" + strconv.FormatUint(uint64(a), 16)
}

// MarshalText implements encoding.TextMarshaler with String's notation, so
// that encoding/json writes an Address as a JSON string.
func (a Address) MarshalText() ([]byte, error) {
	return strconv.AppendUint([]byte("0x"), uint64(a), 16), nil
}

// UnmarshalText implements encoding.TextUnmarshaler; it accepts what
// ParseAddress accepts and fails with an *AddressError.
func (a *Address) UnmarshalText(text []byte) error {
	v, err := ParseAddress(string(text))
	if err != nil {
		return err
	}
	*a = v
	return nil
}

// ParseAddress parses an address in the profile's notation. It accepts
// upper- or lower-case hex digits after a "0x" prefix, as docs/profile-format.md
// promises readers do, and fails with an *AddressError.
func ParseAddress(s string) (Address, error) {
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || h == "" || strings.HasPrefix(h, "+") || strings.HasPrefix(h, "-") {
		return 0, &AddressError{Text: s, Msg: "want hex with a 0x prefix"}
	}
	v, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		msg := "want hex with a 0x prefix"
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			msg = "more than 64 bits"
		}
		return 0, &AddressError{Text: s, Msg: msg}
	}
	return Address(v), nil
}

// An AddressError reports text that is not an address in the profile's
// notation.
type AddressError struct {
	// Text is the text as found in the profile.
	Text string
	// Msg says what is wrong with it.
	Msg string
}

// Error implements error: `address "0xzz": want hex with a 0x prefix`.
func (e *AddressError) Error() string {
	return "address " + strconv.Quote(e.Text) + ": " + e.Msg
}
