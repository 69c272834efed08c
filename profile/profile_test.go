package profile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func intp(n int) *int { return &n }

// sample returns a valid profile whose lists are deliberately out of order.
func sample() *Profile {
	return &Profile{
		Version:    Version,
		Executable: "/src/prog",
		BuildID:    "abcd",
		Args:       []string{"./prog", "x"},
		Mode:       ModeLinesFuncs,
		Exit:       Exit{Code: intp(3)},
		Lines: []Line{
			{File: "/src/b.c", Line: 2, Count: 5},
			{File: "/src/a.c", Line: 10, Count: 0},
			{File: "/src/a.c", Line: 9, Count: 1},
		},
		Functions: []Function{
			{Name: "f", Count: 2, Address: 0x1010, File: "/src/a.c", Line: 9},
			{Name: "main", Count: 1, Address: 0x200},
		},
		Sites: []Site{
			{Address: 0x1010, Count: 2, Kind: KindLineFunc},
			{Address: 0x200, Count: 1, Kind: KindFunc},
			{Address: 0xff0, Count: 5, Kind: KindLine},
		},
		Dropped: []Dropped{{Address: 0x1013, File: "/src/a.c", Line: 9, Reason: "not an instruction start"}},
		Notes:   []string{"1 line-table row dropped: not an instruction start"},
	}
}

func TestSort(t *testing.T) {
	p := sample()
	p.Sort()
	var got []string
	for _, l := range p.Lines {
		got = append(got, l.File+":"+strings.Repeat("I", l.Line))
	}
	want := []string{"/src/a.c:" + strings.Repeat("I", 9), "/src/a.c:" + strings.Repeat("I", 10), "/src/b.c:II"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lines order = %q, want %q", got, want)
	}
	// Addresses sort by value, not by text: 0x200 < 0xff0 < 0x1010.
	if a := []Address{p.Sites[0].Address, p.Sites[1].Address, p.Sites[2].Address}; !reflect.DeepEqual(a, []Address{0x200, 0xff0, 0x1010}) {
		t.Errorf("sites order = %v", a)
	}
	if p.Functions[0].Name != "main" {
		t.Errorf("functions order: first = %q, want main", p.Functions[0].Name)
	}
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.json")
	for _, p := range []*Profile{sample(), {
		Version: Version, Executable: "/x", Args: nil, Mode: ModeFuncs,
		Exit: Exit{Signal: "SIGSEGV", FaultAddress: new(Address(0x0)), PC: new(Address(0x401000)), Function: "crash", File: "/x.c", Line: 12},
	}} {
		if err := p.Save(path); err != nil {
			t.Fatalf("Save: %v", err)
		}
		first, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		q, err := Load(path)
		if err != nil {
			t.Fatalf("Load: %v\n%s", err, first)
		}
		if !reflect.DeepEqual(p, q) { // Save sorted and normalized p
			t.Errorf("round trip changed the profile:\nsaved  %+v\nloaded %+v", p, q)
		}
		if err := q.Save(path); err != nil {
			t.Fatal(err)
		}
		second, _ := os.ReadFile(path)
		if !bytes.Equal(first, second) {
			t.Errorf("second save differs:\n%s\n---\n%s", first, second)
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("saved file mode = %v, %v; want 0644", fi.Mode(), err)
		}
	}
	assertNoTemp(t, dir, "p.json")
}

// TestExample keeps docs/profile-format.md's example loadable and canonical.
func TestExample(t *testing.T) {
	path := filepath.Join("testdata", "example.json")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !p.HasLines() || !p.HasFuncs() || p.Exit.ShellStatus() != 139 {
		t.Errorf("HasLines=%v HasFuncs=%v ShellStatus=%d", p.HasLines(), p.HasFuncs(), p.Exit.ShellStatus())
	}
	var got bytes.Buffer
	if err := p.Encode(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("Encode(Load(%s)) is not byte-identical:\n%s", path, got.Bytes())
	}
}

func TestSaveFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := sample()
	bad.Mode = "everything"
	err := bad.Save(path)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Field != "mode" {
		t.Errorf("Save(bad mode) = %v, want *FormatError on mode", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("failed Save clobbered the old file: %q", b)
	}
	if err := sample().Save(filepath.Join(dir, "no", "such", "dir", "p.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Save into a missing directory = %v, want fs.ErrNotExist", err)
	}
	assertNoTemp(t, dir, "p.json")
}

func assertNoTemp(t *testing.T, dir string, keep ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.Contains(strings.Join(keep, "\x00"), e.Name()) {
			t.Errorf("left behind %s", e.Name())
		}
	}
}

func TestLoadErrors(t *testing.T) {
	valid, err := os.ReadFile(filepath.Join("testdata", "example.json"))
	if err != nil {
		t.Fatal(err)
	}
	const minimal = `{"version":1,"executable":"/x","args":[],"mode":"lines","exit":{"code":0},"lines":[],"functions":[],"sites":[]}`
	edit := func(old, new string) string {
		if !strings.Contains(minimal, old) {
			t.Fatalf("test bug: %q not in minimal", old)
		}
		return strings.Replace(minimal, old, new, 1)
	}
	tests := []struct {
		name    string
		data    string
		version bool   // want ErrVersion rather than *FormatError
		field   string // FormatError.Field, if checked
	}{
		{name: "empty", data: ""},
		{name: "blank", data: " \n\t"},
		{name: "garbage", data: "\x7fELF\x02\x01\x01"},
		{name: "not an object", data: "[1,2,3]"},
		{name: "null", data: "null", field: "version"},
		{name: "truncated", data: string(valid[:len(valid)/2])},
		{name: "truncated minimal", data: minimal[:len(minimal)-1]},
		{name: "trailing data", data: minimal + "}"},
		{name: "two objects", data: minimal + minimal},
		{name: "version 4", data: edit(`"version":1`, `"version":4`), version: true},
		{name: "version 0", data: edit(`"version":1`, `"version":0`), version: true},
		{name: "version 4 other shape", data: `{"version":4,"lines":"x"}`, version: true},
		{name: "version string", data: edit(`"version":1`, `"version":"1"`), field: "version"},
		{name: "version float", data: edit(`"version":1`, `"version":1.5`), field: "version"},
		{name: "no version", data: edit(`"version":1,`, ``), field: "version"},
		{name: "no executable", data: edit(`"executable":"/x",`, ``), field: "executable"},
		{name: "empty executable", data: edit(`"executable":"/x"`, `"executable":""`), field: "executable"},
		{name: "no args", data: edit(`"args":[],`, ``), field: "args"},
		{name: "no mode", data: edit(`"mode":"lines",`, ``), field: "mode"},
		{name: "bad mode", data: edit(`"mode":"lines"`, `"mode":"funcs,lines"`), field: "mode"},
		{name: "no exit", data: edit(`"exit":{"code":0},`, ``), field: "exit"},
		{name: "code and signal", data: edit(`{"code":0}`, `{"code":0,"signal":"SIGSEGV"}`), field: "exit.code"},
		{name: "bad pc", data: edit(`{"code":0}`, `{"signal":"SIGSEGV","pc":"401000"}`), field: "exit.pc"},
		{name: "no lines", data: edit(`"lines":[],`, ``), field: "lines"},
		{name: "null lines", data: edit(`"lines":[]`, `"lines":null`), field: "lines"},
		{name: "no functions", data: edit(`"functions":[],`, ``), field: "functions"},
		{name: "no sites", data: edit(`,"sites":[]`, ``), field: "sites"},
		{name: "line type", data: edit(`"lines":[]`, `"lines":[{"file":"/a.c","line":"7","count":1}]`)},
		{name: "negative count", data: edit(`"lines":[]`, `"lines":[{"file":"/a.c","line":7,"count":-1}]`)},
		{name: "line 0", data: edit(`"lines":[]`, `"lines":[{"file":"/a.c","line":0,"count":1}]`), field: "lines[0].line"},
		{name: "no file", data: edit(`"lines":[]`, `"lines":[{"line":3,"count":1}]`), field: "lines[0].file"},
		{name: "duplicate line", data: edit(`"lines":[]`, `"lines":[{"file":"/a.c","line":3,"count":1},{"file":"/a.c","line":3,"count":2}]`), field: "lines[1]"},
		{name: "function no name", data: edit(`"functions":[]`, `"functions":[{"count":1,"address":"0x10"}]`), field: "functions[0].name"},
		{name: "function bad address", data: edit(`"functions":[]`, `"functions":[{"name":"f","count":1,"address":"0xzz"}]`), field: "functions[0].address"},
		{name: "duplicate site", data: edit(`"sites":[]`, `"sites":[{"address":"0x10","count":1,"kind":"line"},{"address":"0x010","count":1,"kind":"line"}]`), field: "sites[1]"},
		{name: "site kind", data: edit(`"sites":[]`, `"sites":[{"address":"0x10","count":1,"kind":"func,line"}]`), field: "sites[0].kind"},
		{name: "source bad md5", data: edit(`"sites":[]`, `"sites":[],"sources":[{"file":"/a.c","md5":"0123"}]`), field: "sources[0].md5"},
		{name: "source upper md5", data: edit(`"sites":[]`, `"sites":[],"sources":[{"file":"/a.c","md5":"0123456789ABCDEF0123456789abcdef"}]`), field: "sources[0].md5"},
		{name: "source no file", data: edit(`"sites":[]`, `"sites":[],"sources":[{"md5":"0123456789abcdef0123456789abcdef"}]`), field: "sources[0].file"},
		{name: "source twice", data: edit(`"sites":[]`, `"sites":[],"sources":[{"file":"/a.c","md5":"0123456789abcdef0123456789abcdef"},{"file":"/a.c","md5":"0123456789abcdef0123456789abcdef"}]`), field: "sources[1]"},
		{name: "source module", data: edit(`"sites":[]`, `"sites":[],"sources":[{"file":"/a.c","md5":"0123456789abcdef0123456789abcdef","module":"/lib.so"}]`), field: "sources[0].module"},
		{name: "dropped no reason", data: edit(`"sites":[]`, `"sites":[],"dropped":[{"address":"0x10","file":"/a.c","line":1}]`), field: "dropped[0].reason"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, "p.json")
			if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := Load(path)
			if err == nil {
				t.Fatalf("Load succeeded: %+v", p)
			}
			if tt.version {
				if !errors.Is(err, ErrVersion) {
					t.Fatalf("err = %v, want ErrVersion", err)
				}
				if !strings.Contains(err.Error(), "reads versions 1 to 3") || !strings.Contains(err.Error(), path) {
					t.Errorf("version error %q should name the file and the supported version", err)
				}
				return
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v (%T), want *FormatError", err, err)
			}
			if fe.Path != path {
				t.Errorf("FormatError.Path = %q, want %q", fe.Path, path)
			}
			if tt.field != "" && fe.Field != tt.field {
				t.Errorf("FormatError.Field = %q, want %q (err %v)", fe.Field, tt.field, err)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want fs.ErrNotExist", err)
	}
	if _, err := Decode(strings.NewReader(minimal)); err != nil {
		t.Errorf("Decode(minimal) = %v", err)
	}
}

func TestAddress(t *testing.T) {
	for _, a := range []Address{0, 1, 0x401136, 1<<64 - 1} {
		s := a.String()
		if b, err := ParseAddress(s); err != nil || b != a {
			t.Errorf("ParseAddress(%q) = %#x, %v; want %#x", s, b, err, a)
		}
		if text, _ := a.MarshalText(); string(text) != s {
			t.Errorf("%#x.MarshalText() = %q, want %q", uint64(a), text, s)
		}
	}
	if a, err := ParseAddress("0x40113A"); err != nil || a != 0x40113a || a.String() != "0x40113a" {
		t.Errorf("ParseAddress(0x40113A) = %v, %v; want 0x40113a", a, err)
	}
	for _, s := range []string{"", "0x", "401136", "0x+1", "0x-1", "0xg", "0x10000000000000000", " 0x1"} {
		if _, err := ParseAddress(s); err == nil {
			t.Errorf("ParseAddress(%q) succeeded", s)
		}
	}
}

func TestShellStatus(t *testing.T) {
	tests := []struct {
		exit Exit
		want int
	}{
		{Exit{Code: intp(0)}, 0},
		{Exit{Code: intp(42)}, 42},
		{Exit{Signal: "SIGSEGV"}, 139},
		{Exit{Signal: "SIGKILL"}, 137},
		{Exit{Signal: "SIGABRT"}, 134},
		{Exit{Signal: "SIGIOT"}, 134},
		{Exit{Signal: "SIGSYS"}, 159},
		{Exit{Signal: "signal 40"}, 168},
		{Exit{Signal: "SIGBOGUS"}, 1},
		{Exit{}, 1},
	}
	for _, tt := range tests {
		if got := tt.exit.ShellStatus(); got != tt.want {
			t.Errorf("%+v.ShellStatus() = %d, want %d", tt.exit, got, tt.want)
		}
	}
	if !(Exit{Signal: "SIGSEGV"}).Killed() || (Exit{Code: intp(0)}).Killed() {
		t.Error("Killed is wrong")
	}
}

func TestSignalNames(t *testing.T) {
	for n := 1; n <= 64; n++ {
		name := SignalName(n)
		if m, ok := SignalNumber(name); !ok || m != n {
			t.Errorf("SignalNumber(SignalName(%d) = %q) = %d, %v", n, name, m, ok)
		}
	}
	if SignalName(11) != "SIGSEGV" || SignalName(7) != "SIGBUS" || SignalName(31) != "SIGSYS" {
		t.Error("signal table is off")
	}
	for _, s := range []string{"", "SEGV", "sigsegv", "signal 0", "signal 65", "signal 011", "signal -1"} {
		if n, ok := SignalNumber(s); ok {
			t.Errorf("SignalNumber(%q) = %d, true", s, n)
		}
	}
}

func TestMode(t *testing.T) {
	for _, tt := range []struct {
		mode         string
		lines, funcs bool
	}{{ModeLines, true, false}, {ModeFuncs, false, true}, {ModeLinesFuncs, true, true}, {"", false, false}} {
		p := &Profile{Mode: tt.mode}
		if p.HasLines() != tt.lines || p.HasFuncs() != tt.funcs {
			t.Errorf("mode %q: HasLines=%v HasFuncs=%v", tt.mode, p.HasLines(), p.HasFuncs())
		}
	}
}
