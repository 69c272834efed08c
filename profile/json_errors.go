package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// Turning encoding/json's errors into *FormatError messages a user can act
// on: the field, what it holds and what the schema wants, in JSON's terms
// rather than Go's.

// jsonError translates an encoding/json error on data.
func jsonError(err error, data []byte) *FormatError {
	var (
		te *json.UnmarshalTypeError
		se *json.SyntaxError
		ae *AddressError
	)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &FormatError{Msg: "truncated: the JSON ends before the profile does", Err: io.ErrUnexpectedEOF}
	case errors.As(err, &ae):
		return &FormatError{Field: addressField(data, ae.Text), Err: ae}
	case errors.As(err, &se):
		return &FormatError{NotProfile: true, Msg: fmt.Sprintf("not JSON at offset %d: %s", se.Offset, se.Error())}
	case errors.As(err, &te):
		have := jsonValue(te.Value)
		if te.Field == "" {
			return &FormatError{NotProfile: true, Msg: "the document is " + have + ", not an object"}
		}
		return &FormatError{Field: te.Field, Msg: have + ": want " + jsonType(te.Type)}
	}
	return &FormatError{NotProfile: true, Msg: "cannot decode the JSON", Err: err}
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

// addressField returns the name of the first address field of data
// ("functions[3].address") whose text is text, "" if none is. encoding/json
// stops at an Address that does not parse without saying where; this second
// look, taken only on that failure, names the field the way Validate names
// the others.
func addressField(data []byte, text string) string {
	type addr struct {
		Address  *string `json:"address"`
		End      *string `json:"end"`
		Function *string `json:"function"`
		From     *string `json:"from"`
		To       *string `json:"to"`
		Target   *string `json:"target"`
	}
	var doc struct {
		Exit struct {
			FaultAddress *string `json:"fault_address"`
			PC           *string `json:"pc"`
		} `json:"exit"`
		Functions, Sites, Dropped, Blocks, Edges, Branches, Calls []addr
	}
	// Type errors elsewhere do not matter here: Unmarshal fills in what it
	// can, and the address in question is a string (it reached
	// UnmarshalText).
	_ = json.Unmarshal(data, &doc)
	is := func(s *string) bool { return s != nil && *s == text }
	switch {
	case is(doc.Exit.FaultAddress):
		return "exit.fault_address"
	case is(doc.Exit.PC):
		return "exit.pc"
	}
	for _, list := range []struct {
		name  string
		items []addr
	}{{"functions", doc.Functions}, {"sites", doc.Sites}, {"dropped", doc.Dropped}, {"blocks", doc.Blocks},
		{"edges", doc.Edges}, {"branches", doc.Branches}, {"calls", doc.Calls}} {
		for i, it := range list.items {
			for _, f := range []struct {
				name string
				s    *string
			}{{"address", it.Address}, {"end", it.End}, {"function", it.Function}, {"from", it.From}, {"to", it.To}, {"target", it.Target}} {
				if is(f.s) {
					return list.name + "[" + strconv.Itoa(i) + "]." + f.name
				}
			}
		}
	}
	return ""
}
