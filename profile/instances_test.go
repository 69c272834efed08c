package profile

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

// instancesProfile is a profile of a template biggest<T> used with int
// (7 calls) and double (3 calls): line 6 is its entry, line 8 its if.
func instancesProfile() *Profile {
	code := 0
	return &Profile{Version: Version, Executable: "/t", Mode: ModeLines, Exit: Exit{Code: &code},
		Lines: []Line{{File: "/t.cpp", Line: 6, Count: 10}, {File: "/t.cpp", Line: 8, Count: 10}},
		Sites: []Site{},
		Instances: []Instance{
			{Function: "_Z7biggestIiET_S0_S0_", Address: 0x1290, File: "/t.cpp", Line: 6, EndLine: 11,
				Lines: []InstanceLine{{Line: 6, Count: 7}, {Line: 8, Count: 7}}},
			{Function: "_Z7biggestIdET_S0_S0_", Address: 0x12ac, File: "/t.cpp", Line: 6, EndLine: 11,
				Lines: []InstanceLine{{Line: 6, Count: 3}, {Line: 8, Count: 3, UnexecutedBlock: true}}},
		}}
}

// TestInstancesRoundTrip: instances are saved and read back as they were,
// and a profile without them (every file written before them) saves
// without the field.
func TestInstancesRoundTrip(t *testing.T) {
	p := instancesProfile()
	var buf bytes.Buffer
	if err := p.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"instances": [`) || !strings.Contains(buf.String(), `"end_line": 11`) {
		t.Fatalf("saved profile lacks its instances:\n%s", buf.String())
	}
	q, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.Instances) != 2 || q.Instances[1].Function != "_Z7biggestIdET_S0_S0_" || !q.Instances[1].Lines[1].UnexecutedBlock {
		t.Errorf("instances read back: %+v", q.Instances)
	}
	if l, ok := q.Instances[0].Count(8); !ok || l.Count != 7 {
		t.Errorf("Count(8) of the int instance: %+v %v, want 7", l, ok)
	}
	if _, ok := q.Instances[0].Count(7); ok {
		t.Errorf("Count(7): a line without code has a count")
	}
	old, err := os.ReadFile("testdata/example.json")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(old, []byte("instances")) {
		t.Fatal("testdata/example.json must stay a profile without instances")
	}
	e, err := Decode(bytes.NewReader(old))
	if err != nil {
		t.Fatalf("a profile without instances: %v", err)
	}
	if e.Instances != nil {
		t.Errorf("instances of an old profile: %v, want none", e.Instances)
	}
}

// TestInstancesMerge: an instance's line counts add up by address and line.
func TestInstancesMerge(t *testing.T) {
	a, b := instancesProfile(), instancesProfile()
	b.Instances[0].Lines = append(b.Instances[0].Lines, InstanceLine{Line: 9, Count: 2})
	m, err := Merge(false, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Instances) != 2 {
		t.Fatalf("merged instances: %+v", m.Instances)
	}
	in := m.Instances[0] // by address: the int instance
	if in.Function != "_Z7biggestIiET_S0_S0_" || len(in.Lines) != 3 || in.Lines[0].Count != 14 || in.Lines[2].Count != 2 {
		t.Errorf("merged int instance: %+v", in)
	}
	if a.Instances[0].Lines[0].Count != 7 || len(a.Instances[0].Lines) != 2 {
		t.Errorf("Merge changed its input: %+v", a.Instances[0])
	}
	c := m.Clone()
	c.Instances[0].Lines[0].Count = 1
	if m.Instances[0].Lines[0].Count != 14 {
		t.Error("Clone shares the instances' lines")
	}
}

// TestInstancesInvalid: each rule of an instance is checked, naming the
// field.
func TestInstancesInvalid(t *testing.T) {
	for _, tc := range []struct {
		field  string
		change func(*Instance)
	}{
		{"instances[0].function", func(in *Instance) { in.Function = "" }},
		{"instances[0].file", func(in *Instance) { in.File = "" }},
		{"instances[0].line", func(in *Instance) { in.Line = 0 }},
		{"instances[0].end_line", func(in *Instance) { in.EndLine = 5 }},
		{"instances[0].lines[1].line", func(in *Instance) { in.Lines[1].Line = 6 }},
		{"instances[0].module", func(in *Instance) { in.Module = "/lib.so" }},
		{"instances[1]", func(in *Instance) { in.Address = 0x12ac }},
	} {
		p := instancesProfile()
		tc.change(&p.Instances[0])
		var fe *FormatError
		if err := p.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v, want a FormatError on it", tc.field, err)
		}
	}
}
