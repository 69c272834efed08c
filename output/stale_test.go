package output

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

// TestStaleSourceMD5: when the line table recorded a source's MD5, the
// listing notes a source whose bytes differ from it, once, naming the file
// and the binary (or module), and still lists the counts; a source whose
// bytes match gets no note.
func TestStaleSourceMD5(t *testing.T) {
	const text = "int a;\nint main(void) { return a; }\n"
	sum := md5.Sum([]byte(text))
	same := hex.EncodeToString(sum[:])
	const other = "0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name, module, md5, want string
	}{
		{"same", "", same, ""},
		{"same, bytes reversed as GNU as writes them", "", reverseHex(same), ""},
		{"changed", "", other, "note: source file /src/a.c differs from the one /x was built from (its DWARF MD5): the counts may fall on the wrong lines\n"},
		{"module", "/lib/liba.so", other, "note: source file /src/a.c differs from the one /lib/liba.so was built from (its DWARF MD5)"},
		{"other module's digest", "/lib/liba.so", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &profile.Profile{
				Version: profile.Version, Executable: "/x", Mode: profile.ModeLines, Exit: profile.Exit{Code: intp(0)},
				Lines: []profile.Line{{File: "/src/a.c", Line: 2, Count: 7, Module: tc.module}},
			}
			if tc.module != "" {
				p.Modules = []profile.Module{{Path: tc.module, Kind: profile.ModuleLibrary}}
			}
			if tc.md5 != "" {
				p.Sources = []profile.Source{{File: "/src/a.c", MD5: tc.md5, Module: tc.module}}
			} else {
				p.Sources = []profile.Source{{File: "/src/a.c", MD5: other}} // the executable's, not the module's
			}
			ffs := newFakeFS(t)
			ffs.files["/src/a.c"] = "=" + text
			var buf bytes.Buffer
			if err := Write(&buf, p, Options{ReadFile: ffs.ReadFile}); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			if n := strings.Count(out, "DWARF MD5"); (tc.want == "" && n != 0) || (tc.want != "" && (n != 1 || !strings.Contains(out, tc.want))) {
				t.Errorf("want note %q, got:\n%s", tc.want, out)
			}
			if !strings.Contains(out, "7: int main(void)") {
				t.Errorf("the counts are not listed:\n%s", out)
			}
		})
	}
}
