package profile

import (
	"bytes"
	"testing"
)

// TestSources: the MD5 digests of the sources survive a save and load, a
// clone and a merge (the first input's digest of a file is kept), and
// SourceMD5 finds them by module and file.
func TestSources(t *testing.T) {
	const a, b = "0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"
	p := &Profile{Version: Version, Executable: "/x", Mode: ModeLines, Exit: Exit{Code: new(0)},
		Sources: []Source{{File: "/src/b.c", MD5: b}, {File: "/src/a.c", MD5: a}}}
	var buf bytes.Buffer
	if err := p.Clone().Encode(&buf); err != nil {
		t.Fatal(err)
	}
	q, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Sources) != 2 || q.Sources[0].File != "/src/a.c" {
		t.Errorf("decoded sources %+v, want a.c then b.c", q.Sources)
	}
	other := &Profile{Version: Version, Executable: "/x", Mode: ModeLines, Exit: Exit{Code: new(0)},
		Sources: []Source{{File: "/src/a.c", MD5: b}, {File: "/src/c.c", MD5: a}}}
	m, err := Merge(false, q, other)
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]string{"/src/a.c": a, "/src/b.c": b, "/src/c.c": a} {
		if got, ok := m.SourceMD5("", file); !ok || got != want {
			t.Errorf("merged SourceMD5(%s) = %q, %v; want %q", file, got, ok, want)
		}
	}
	if _, ok := m.SourceMD5("/lib.so", "/src/a.c"); ok {
		t.Error("SourceMD5 found a.c in a module that does not record it")
	}
}
