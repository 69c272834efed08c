package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Turning encoding/json's errors into *FormatError messages a user can act
// on: the field, what it holds and what the schema wants, in JSON's terms
// rather than Go's.

// jsonError translates an encoding/json error met while reading the
// document's structure.
func jsonError(err error) *FormatError {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &FormatError{Msg: "truncated: the JSON ends before the profile does", Err: io.ErrUnexpectedEOF}
	case errors.As(err, &se):
		return &FormatError{NotProfile: true, Msg: fmt.Sprintf("not JSON at offset %d: %s", se.Offset, se.Error())}
	}
	return &FormatError{NotProfile: true, Msg: "cannot decode the JSON", Err: err}
}

// fieldError translates the error of decoding raw, the value of field
// ("exit", "lines[3]"), into its type.
func fieldError(err error, field string, raw []byte) *FormatError {
	var (
		te *json.UnmarshalTypeError
		ae *AddressError
	)
	join := func(sub string) string {
		if sub == "" {
			return field
		}
		return field + "." + sub
	}
	switch {
	case errors.As(err, &ae):
		return &FormatError{Field: join(addressKey(raw, ae.Text)), Err: ae}
	case errors.As(err, &te):
		return &FormatError{Field: join(te.Field), Msg: jsonValue(te.Value) + ": want " + jsonType(te.Type)}
	}
	return jsonError(err)
}

// tokenKind words the kind of a JSON value from its first token, as
// jsonValue does.
func tokenKind(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		if tok == json.Delim('[') {
			return "a list"
		}
		return "an object"
	case string:
		return "a string"
	case float64, json.Number:
		return "a number"
	case bool:
		return "true or false"
	}
	return "null"
}

// jsonValue words the Value of a json.UnmarshalTypeError ("array",
// "number -1") for a message.
func jsonValue(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return n
	}
	switch v {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "number":
		return "a number"
	}
	return v
}

// jsonType words the JSON a Go type of the schema wants.
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[Address]() {
		return `an address, a string such as "0x401136"`
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer from 0 to 2^64-1"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another type"
}

// addressKey returns the key of raw, one object of the profile (an
// element of a list, or the exit), whose address text is text, "" if none
// is. encoding/json stops at an Address that does not parse without saying
// where; this second look, taken only on that failure, names the field the
// way Validate names the others.
func addressKey(raw []byte, text string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return ""
	}
	for _, key := range []string{"address", "end", "function", "from", "to", "target", "fault_address", "pc"} {
		var s string
		if json.Unmarshal(obj[key], &s) == nil && s == text {
			return key
		}
	}
	return ""
}
