package pprofpb

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	gpprof "github.com/google/pprof/profile"
)

// example is a profile with every field this package writes, a sample
// whose body is longer than a one-byte length (300 values), an address
// and a count that need ten-byte varints, and a string used twice.
func example() *Profile {
	exe := &Mapping{ID: 1, Limit: math.MaxUint64, File: "/bin/a", BuildID: "4f6c", HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	lib := &Mapping{ID: 2, Start: 0x1000, Limit: 0x2000, Offset: 0x40, File: "/lib/b.so", HasInlineFrames: true}
	main := &Function{ID: 1, Name: "main", SystemName: "main", Filename: "a.c", StartLine: 2}
	work := &Function{ID: 2, Name: "work", SystemName: "_Z4workv", Filename: "a.c", StartLine: 7}
	l1 := &Location{ID: 1, Mapping: exe, Address: 0x401126, Line: []Line{{Function: main, Line: 3}}}
	l2 := &Location{ID: 2, Mapping: lib, Address: math.MaxUint64 - 1, Line: []Line{{Function: work, Line: 8}, {Function: main, Line: 4}}}
	l3 := &Location{ID: 3, Line: []Line{{Function: work, Line: 9}}}
	p := &Profile{
		DefaultSampleType: "calls",
		Mapping:           []*Mapping{exe, lib},
		Location:          []*Location{l1, l2, l3},
		Function:          []*Function{main, work},
		Comments:          []string{"command: ./a", "a note"},
		TimeNanos:         1_700_000_000_000_000_000,
		DurationNanos:     int64(3e9),
		PeriodType:        &ValueType{Type: "count", Unit: "count"},
		Period:            1,
	}
	for i := range 300 {
		p.SampleType = append(p.SampleType, &ValueType{Type: "t" + strings.Repeat("x", i%3), Unit: "count"})
	}
	v := make([]int64, 300)
	v[0], v[299] = math.MaxInt64, 1000
	w := make([]int64, 300)
	w[1] = 1
	p.Sample = []*Sample{{Location: []*Location{l1}, Value: v}, {Location: []*Location{l2, l1}, Value: w}, {Location: []*Location{l3}, Value: make([]int64, 300)}}
	return p
}

// TestWriteReadByPprof checks that google/pprof's reader, the independent
// consumer, reads back every field written.
func TestWriteReadByPprof(t *testing.T) {
	p := example()
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	g, err := gpprof.Parse(&buf)
	if err != nil {
		t.Fatalf("google/pprof cannot read it: %v", err)
	}
	if err := g.CheckValid(); err != nil {
		t.Fatalf("google/pprof finds it invalid: %v", err)
	}
	if len(g.SampleType) != 300 || g.SampleType[1].Type != "tx" || g.SampleType[2].Unit != "count" || g.DefaultSampleType != "calls" {
		t.Errorf("sample types %v, default %q", g.SampleType[:3], g.DefaultSampleType)
	}
	if g.PeriodType.Type != "count" || g.Period != 1 || g.TimeNanos != p.TimeNanos || g.DurationNanos != p.DurationNanos {
		t.Errorf("period %v %d, time %d duration %d", g.PeriodType, g.Period, g.TimeNanos, g.DurationNanos)
	}
	if strings.Join(g.Comments, "|") != "command: ./a|a note" {
		t.Errorf("comments %q", g.Comments)
	}
	if len(g.Mapping) != 2 {
		t.Fatalf("%d mappings", len(g.Mapping))
	}
	for i, m := range p.Mapping {
		gm := g.Mapping[i]
		if gm.ID != m.ID || gm.Start != m.Start || gm.Limit != m.Limit || gm.Offset != m.Offset || gm.File != m.File || gm.BuildID != m.BuildID ||
			gm.HasFunctions != m.HasFunctions || gm.HasFilenames != m.HasFilenames || gm.HasLineNumbers != m.HasLineNumbers || gm.HasInlineFrames != m.HasInlineFrames {
			t.Errorf("mapping %d: got %+v, want %+v", i, gm, m)
		}
	}
	for i, f := range p.Function {
		gf := g.Function[i]
		if gf.ID != f.ID || gf.Name != f.Name || gf.SystemName != f.SystemName || gf.Filename != f.Filename || gf.StartLine != f.StartLine {
			t.Errorf("function %d: got %+v, want %+v", i, gf, f)
		}
	}
	for i, l := range p.Location {
		gl := g.Location[i]
		if gl.ID != l.ID || gl.Address != l.Address || len(gl.Line) != len(l.Line) || (l.Mapping == nil) != (gl.Mapping == nil) ||
			l.Mapping != nil && gl.Mapping.ID != l.Mapping.ID {
			t.Fatalf("location %d: got %+v, want %+v", i, gl, l)
		}
		for k, ln := range l.Line {
			if gl.Line[k].Function.ID != ln.Function.ID || gl.Line[k].Line != ln.Line {
				t.Errorf("location %d line %d: got %+v, want %+v", i, k, gl.Line[k], ln)
			}
		}
	}
	for i, s := range p.Sample {
		gs := g.Sample[i]
		if len(gs.Location) != len(s.Location) || len(gs.Value) != len(s.Value) {
			t.Fatalf("sample %d: %d locations, %d values", i, len(gs.Location), len(gs.Value))
		}
		for k, l := range s.Location {
			if gs.Location[k].ID != l.ID {
				t.Errorf("sample %d location %d: ID %d, want %d", i, k, gs.Location[k].ID, l.ID)
			}
		}
		for k, v := range s.Value {
			if gs.Value[k] != v {
				t.Errorf("sample %d value %d: %d, want %d", i, k, gs.Value[k], v)
			}
		}
	}
}

// TestWriteEmpty checks that a profile with nothing in it is one pprof
// reads.
func TestWriteEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := new(Profile).Write(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := gpprof.Parse(&buf); err != nil {
		t.Fatalf("google/pprof cannot read an empty profile: %v", err)
	}
}

func TestCheckValid(t *testing.T) {
	for name, spoil := range map[string]func(p *Profile){
		"mapping ID 0":          func(p *Profile) { p.Mapping[1].ID = 0 },
		"mapping ID twice":      func(p *Profile) { p.Mapping[1].ID = 1 },
		"function ID twice":     func(p *Profile) { p.Function[1].ID = 1 },
		"location ID 0":         func(p *Profile) { p.Location[2].ID = 0 },
		"nil location":          func(p *Profile) { p.Location[2] = nil },
		"foreign mapping":       func(p *Profile) { p.Location[0].Mapping = &Mapping{ID: 9} },
		"foreign function":      func(p *Profile) { p.Location[0].Line[0].Function = &Function{ID: 9} },
		"foreign location":      func(p *Profile) { p.Sample[0].Location[0] = &Location{ID: 9} },
		"values of other types": func(p *Profile) { p.Sample[1].Value = p.Sample[1].Value[1:] },
		"nil sample":            func(p *Profile) { p.Sample[2] = nil },
	} {
		p := example()
		spoil(p)
		if err := p.CheckValid(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: CheckValid = %v, want ErrInvalid", name, err)
		}
	}
}

func TestUvarintLen(t *testing.T) {
	for _, tt := range []struct {
		v uint64
		n int
	}{{0, 1}, {127, 1}, {128, 2}, {1<<14 - 1, 2}, {1 << 14, 3}, {math.MaxUint64, 10}} {
		if got := uvarintLen(tt.v); got != tt.n {
			t.Errorf("uvarintLen(%d) = %d, want %d", tt.v, got, tt.n)
		}
	}
}
