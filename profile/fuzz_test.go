package profile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzLoad checks that no input makes the decoder panic, that every failure
// is a *FormatError or ErrVersion, and that whatever loads survives an
// encode/decode round trip unchanged.
func FuzzLoad(f *testing.F) {
	example, err := os.ReadFile(filepath.Join("testdata", "example.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(example)
	f.Add(example[:len(example)/3])
	f.Add([]byte(`{"version":1,"executable":"/x","args":[],"mode":"lines","exit":{"code":0},"lines":[],"functions":[],"sites":[]}`))
	f.Add([]byte(`{"version":1,"executable":"/x","args":["a"],"mode":"funcs","exit":{"signal":"SIGBUS","pc":"0x10"},"lines":[],"functions":[{"name":"f","count":1,"address":"0x10"}],"sites":[{"address":"0x10","count":1,"kind":"func"}]}`))
	f.Add([]byte(`{"version":2}`))
	// Issue 12: impossible values, and JSON of the wrong shape.
	f.Add([]byte(`{"version":2,"executable":"/x","args":[],"mode":"funcs","exit":{"code":300},"lines":[],"functions":[],"sites":[]}`))
	f.Add([]byte(`{"version":2,"executable":"/x","args":[],"mode":"funcs","exit":{"signal":"SIGFOO","pc":"0x0"},"lines":[],"functions":[],"sites":[]}`))
	f.Add([]byte(`{"version":2,"executable":"/x","args":[],"mode":"funcs","exit":{},"lines":[],"functions":[{"name":"f","count":1,"address":"0x10","blocks":1,"blocks_executed":2}],"sites":[]}`))
	f.Add([]byte(`[{"version":2}]`))
	f.Add([]byte(`{"version":1e400}`))
	f.Add([]byte("\x00\xff"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(bytes.NewReader(data))
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error %v (%T) is neither *FormatError nor ErrVersion", err, err)
			}
			return
		}
		var buf bytes.Buffer
		if err := p.Encode(&buf); err != nil {
			t.Fatalf("Encode of a decoded profile: %v", err)
		}
		q, err := Decode(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("Decode of an encoded profile: %v\n%s", err, buf.Bytes())
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the profile:\n%+v\n%+v", p, q)
		}
	})
}
