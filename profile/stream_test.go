package profile

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestEncodeAsMarshalIndent checks that Encode, which writes a profile one
// list element at a time, writes the bytes json.MarshalIndent writes for
// the whole profile, so that the files it saves do not depend on how.
func TestEncodeAsMarshalIndent(t *testing.T) {
	example, err := Load("testdata/example.json")
	if err != nil {
		t.Fatal(err)
	}
	minimal := &Profile{Version: Version, Executable: "/x", Mode: ModeLines}
	for name, p := range map[string]*Profile{"example": example, "blocks": blocksProfile(), "minimal": minimal} {
		var got bytes.Buffer
		if err := p.Encode(&got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := json.MarshalIndent(p, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if want = append(want, '\n'); !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s: Encode wrote\n%s\nwant\n%s", name, got.Bytes(), want)
		}
	}
}

// TestDecodeVersionLast checks that the fields before the version wait for
// it: read as usual when it is one this package reads, and never looked at
// when it is not (another version's shape is not this one's).
func TestDecodeVersionLast(t *testing.T) {
	const rest = `"executable":"/x","args":[],"mode":"lines","exit":{"code":0},"lines":[{"file":"/a.c","line":3,"count":2}],"functions":[],"sites":[]`
	p, err := Decode(strings.NewReader(`{` + rest + `,"version":3}`))
	if err != nil || len(p.Lines) != 1 || p.Lines[0].Count != 2 {
		t.Errorf("version last: %+v, %v", p, err)
	}
	_, err = Decode(strings.NewReader(`{"lines":"x",` + rest + `,"version":9}`))
	if !errors.Is(err, ErrVersion) {
		t.Errorf("version 9 last = %v, want ErrVersion", err)
	}
}

// TestSaveKeepsOld checks that a Save that fails leaves the old file as it
// was and no temporary file beside it.
func TestSaveKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/p.json"
	if err := os.WriteFile(path, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	bad := &Profile{Version: Version, Mode: ModeLines} // no executable
	if err := bad.Save(path); err == nil {
		t.Fatal("Save of an invalid profile succeeded")
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "old\n" {
		t.Errorf("after a failed Save the file holds %q, %v; want the old text", b, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("after a failed Save the directory holds %d files, want 1", len(ents))
	}
	if err := blocksProfile().Save(path); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("the saved file's mode is %v, %v; want the old file's 0640", st.Mode(), err)
	}
}
