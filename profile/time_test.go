package profile

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
)

// TestOlderVersionLoads loads a version-2 profile (no time): it loads
// without time, and encodes as the current version.
func TestOlderVersionLoads(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "example-v2.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != 2 || p.HasTime() || len(p.Samples) != 0 {
		t.Errorf("version %d, time %v, %d samples; want 2, none, 0", p.Version, p.Time, len(p.Samples))
	}
	var b bytes.Buffer
	if err := p.Encode(&b); err != nil {
		t.Fatal(err)
	}
	q, err := Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	if q.Version != Version {
		t.Errorf("re-encoded version %d, want %d", q.Version, Version)
	}
}

func TestMergeTime(t *testing.T) {
	a, err := Load(filepath.Join("testdata", "example.json"))
	if err != nil {
		t.Fatal(err)
	}
	b := a.Clone()
	b.Time.Rate = 500
	old, err := Load(filepath.Join("testdata", "example-v2.json")) // no time
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(false, a, b, old)
	if err != nil {
		t.Fatal(err)
	}
	if m.Time == nil || m.Time.Samples != 2*a.Time.Samples || m.Time.TimeNS != 2*a.Time.TimeNS || m.Time.Rate != 0 {
		t.Errorf("merged time %+v; want twice %+v at rate 0", m.Time, a.Time)
	}
	if len(m.Samples) != len(a.Samples) || m.Samples[0].Samples != 2*a.Samples[0].Samples {
		t.Errorf("merged samples %+v; want %+v doubled", m.Samples, a.Samples)
	}
	for i, f := range m.Functions {
		if f.TimeNS != 2*a.Functions[i].TimeNS || f.Samples != 2*a.Functions[i].Samples {
			t.Errorf("function %s: %d samples %d ns; want twice %d, %d", f.Name, f.Samples, f.TimeNS, a.Functions[i].Samples, a.Functions[i].TimeNS)
		}
	}
	for i, l := range m.Lines {
		if l.TimeNS != 2*a.Lines[i].TimeNS {
			t.Errorf("line %d: %d ns; want twice %d", l.Line, l.TimeNS, a.Lines[i].TimeNS)
		}
	}
}

func TestValidateSamples(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "example.json"))
	if err != nil {
		t.Fatal(err)
	}
	dup := p.Clone()
	dup.Samples = append(dup.Samples, dup.Samples[0])
	noTime := p.Clone()
	noTime.Time = nil
	badModule := p.Clone()
	badModule.Samples[0].Module = "/nowhere.so"
	for name, q := range map[string]*Profile{"duplicate": dup, "no time": noTime, "unknown module": badModule} {
		var fe *FormatError
		if err := q.Validate(); !errors.As(err, &fe) {
			t.Errorf("%s: Validate = %v, want a *FormatError", name, err)
		}
	}
}
