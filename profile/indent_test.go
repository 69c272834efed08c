package profile

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestAppendIndented checks appendIndented against json.MarshalIndent on
// values whose strings hold JSON's punctuation, escapes and non-ASCII
// text, with empty and nested objects and arrays.
func TestAppendIndented(t *testing.T) {
	type inner struct {
		S []string          `json:"s"`
		M map[string]any    `json:"m"`
		E []int             `json:"e"`
		O struct{}          `json:"o"`
		P *Line             `json:"p,omitempty"`
		N map[string]string `json:"n"`
	}
	for _, v := range []any{
		0, -1.5e-9, "x", true, nil, []int{}, map[string]int{},
		Line{File: `/a "b" {c}, [d]: e\f`, Line: 3, Count: 7, Function: "ƒ<>&\u2028"},
		Function{Name: `a\"b`, Count: 1},
		inner{S: []string{"", `\`, `\\"`, "{", "]", ",", ":"}, M: map[string]any{"a": []any{map[string]any{}, []any{[]any{}}}, "b": nil}, E: []int{}},
		[]any{[]any{1, []any{2, map[string]any{"k": "v,:"}}}, map[string]any{"z": map[string]any{"y": []any{}}}},
		"\x00\x1f\u007f é \xff",
	} {
		src, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for _, prefix := range []string{"", "    "} {
			want, err := json.MarshalIndent(v, prefix, "  ")
			if err != nil {
				t.Fatal(err)
			}
			if got := appendIndented([]byte("keep"), src, prefix); !bytes.Equal(got, append([]byte("keep"), want...)) {
				t.Errorf("%#v with prefix %q:\n got %s\nwant %s", v, prefix, got[4:], want)
			}
		}
	}
}

// FuzzAppendIndented: for any valid JSON, appendIndented of its compact
// form is what json.Indent gives.
func FuzzAppendIndented(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{"b":"c\"{,:}"}],"d":{}}`, `"\\\\"`, `[[],[[]],{"":""}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(s)); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "  ", "  "); err != nil {
			t.Fatal(err)
		}
		if got := appendIndented(nil, compact.Bytes(), "  "); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s:\n got %s\nwant %s", compact.Bytes(), got, want.Bytes())
		}
	})
}
