package output

import (
	"bytes"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/profile"
)

func TestWriteHTMLGolden(t *testing.T) {
	missing := bishop()
	missing.Lines = append(missing.Lines, profile.Line{File: "/build/gone/lib.c", Line: 3, Count: 0},
		profile.Line{File: "/build/gone/lib.c", Line: 40, Count: 2})
	missing.Notes = []string{"2 line-table rows dropped: <not> an instruction start"}
	for _, tc := range []struct {
		name string
		p    *profile.Profile
	}{
		{"crash", crashProfile()},
		{"lines", missing},
		{"modules", twoModules()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ffs := newFakeFS(t)
			ffs.files[dir+"/a.c"] = "=" + exportSources["a.c"]
			ffs.files[dir+"/b.c"] = "=" + exportSources["b.c"]
			var buf bytes.Buffer
			if err := WriteHTML(&buf, tc.p, Options{Cwd: dir, ReadFile: ffs.ReadFile}); err != nil {
				t.Fatal(err)
			}
			got := buf.String()
			checkGolden(t, "html/"+tc.name+".html", got)
			for _, ref := range []string{"src=", "href=\"http", "@import", "url("} {
				if strings.Contains(got, ref) {
					t.Errorf("the page refers to an outside resource (%q): it must be self-contained", ref)
				}
			}
		})
	}
	if err := WriteHTML(&bytes.Buffer{}, nil, Options{}); err != ErrNilProfile {
		t.Errorf("WriteHTML(nil) = %v, want ErrNilProfile", err)
	}
}

func TestHTMLHeat(t *testing.T) {
	for _, tc := range []struct {
		count, max uint64
		want       string
	}{
		{1, 1000, "background:hsl(200,90%,92%)"},
		{1000, 1000, "background:hsl(30,90%,70%)"},
		{1, 1, "background:hsl(30,90%,70%)"},
	} {
		if got := htmlHeat(tc.count, tc.max); got != tc.want {
			t.Errorf("htmlHeat(%d, %d) = %q, want %q", tc.count, tc.max, got, tc.want)
		}
	}
}
