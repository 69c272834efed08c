package profile

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
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
	q := reencode(t, p)
	if q.Version != Version {
		t.Errorf("re-encoded version %d, want %d", q.Version, Version)
	}
}

// reencode returns p encoded and decoded again.
func reencode(t *testing.T, p *Profile) *Profile {
	t.Helper()
	var b bytes.Buffer
	if err := p.Encode(&b); err != nil {
		t.Fatal(err)
	}
	q, err := Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	return q
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

// TestBlockTime: a block's samples and time_ns survive a save and a load,
// a merge sums them by block, and a block without them (a version 2 file,
// or a block never sampled) has none and writes none.
func TestBlockTime(t *testing.T) {
	a := blocksProfile()
	a.Time = &Time{Rate: 997, Samples: 40, TimeNS: 40_120_360}
	a.Blocks[1].Samples, a.Blocks[1].TimeNS = 30, 30_090_270 // the loop head, 0x10
	var buf bytes.Buffer
	if err := a.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"count": 10,
      "entries": 1,
      "samples": 30,
      "time_ns": 30090270`) || strings.Count(buf.String(), `"time_ns"`) != 2 {
		t.Errorf("saved blocks lack the loop head's time, or a block without samples has some:\n%s", buf.String())
	}
	q, err := Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	loop := func(p *Profile) Block {
		for _, b := range p.Blocks {
			if b.Address == 0x10 {
				return b
			}
		}
		t.Fatalf("no block 0x10 in %+v", p.Blocks)
		return Block{}
	}
	if b := loop(q); b.Samples != 30 || b.TimeNS != 30_090_270 {
		t.Errorf("loaded block %+v; want 30 samples, 30090270 ns", b)
	}
	plain := blocksProfile() // no time, as a file of version 2
	plain.Version = 2
	m, err := Merge(false, a, q, plain)
	if err != nil {
		t.Fatal(err)
	}
	if b := loop(m); b.Samples != 60 || b.TimeNS != 2*30_090_270 || b.Count != 30 {
		t.Errorf("merged block %+v; want count 30, 60 samples, %d ns", b, 2*30_090_270)
	}
	for _, b := range m.Blocks {
		if b.Address == 0x20 && (b.Samples != 0 || b.TimeNS != 0) {
			t.Errorf("merged block 0x20 %+v; want no time", b)
		}
	}
}

// TestOutsideFrames: a chain sampled in a file that is not counted keeps
// its first frame, marked outside, with the file's path as its module;
// it validates, survives a save and a load, and a merge sums it apart
// from the same address in a counted module; an outside frame without a
// file does not validate.
func TestOutsideFrames(t *testing.T) {
	p, err := Load(filepath.Join("testdata", "example.json"))
	if err != nil {
		t.Fatal(err)
	}
	libc := Frame{Address: 0x40dd0, Module: "/usr/lib/x86_64-linux-gnu/libc.so.6", Function: "random_r", Outside: true}
	caller := Frame{Address: p.Functions[0].Address, Function: p.Functions[0].Name}
	p.Stacks = []Stack{
		{Frames: []Frame{libc, caller}, Samples: 3, TimeNS: 3},
		{Frames: []Frame{{Address: 0x40dd0}, caller}, Samples: 2, TimeNS: 2},
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	q := reencode(t, p)
	m, err := Merge(false, p, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Stacks) != 2 {
		t.Fatalf("merged %d stacks; want 2", len(m.Stacks))
	}
	for _, s := range m.Stacks {
		want := uint64(4)
		if s.Frames[0].Outside {
			want = 6
			if s.Frames[0] != libc {
				t.Errorf("outside frame %+v; want %+v", s.Frames[0], libc)
			}
		}
		if s.Samples != want {
			t.Errorf("stack at %+v: %d samples; want %d", s.Frames[0], s.Samples, want)
		}
	}
	bad := p.Clone()
	for i := range bad.Stacks {
		if bad.Stacks[i].Frames[0].Outside {
			bad.Stacks[i].Frames[0].Module = ""
		}
	}
	var fe *FormatError
	if err := bad.Validate(); !errors.As(err, &fe) {
		t.Errorf("outside frame without a file: Validate = %v, want a *FormatError", err)
	}
}
