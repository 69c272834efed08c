package profiler

import (
	"reflect"
	"testing"
)

// TestParseMaps: only executable mappings of files are kept, a path with
// spaces whole, a deleted file's and anonymous mappings left out.
func TestParseMaps(t *testing.T) {
	text := `55d0c0000000-55d0c0001000 r--p 00000000 08:01 100 /usr/bin/prog
7f0000028000-7f00001bd000 r-xp 00028000 08:01 200 /usr/lib/x86_64-linux-gnu/libc.so.6
7f0000200000-7f0000201000 r-xp 00001000 08:01 300 /opt/my lib/libx.so
7f0000300000-7f0000301000 r-xp 00000000 08:01 400 /tmp/old.so (deleted)
7f0000400000-7f0000401000 r-xp 00000000 00:00 0 
7ffd00000000-7ffd00001000 r-xp 00000000 00:00 0 [vdso]
garbage line
`
	want := []foreignMap{
		{lo: 0x7f0000028000, hi: 0x7f00001bd000, off: 0x28000, path: "/usr/lib/x86_64-linux-gnu/libc.so.6"},
		{lo: 0x7f0000200000, hi: 0x7f0000201000, off: 0x1000, path: "/opt/my lib/libx.so"},
	}
	if got := parseMaps(text); !reflect.DeepEqual(got, want) {
		t.Errorf("parseMaps = %+v\nwant %+v", got, want)
	}
}
