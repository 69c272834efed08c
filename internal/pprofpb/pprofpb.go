package pprofpb

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// A Profile is the part of pprof's Profile message patchprof writes. Its
// fields are named as google/pprof's profile.Profile names them; IDs are
// 1-based and unique within their kind, and every pointer refers to an
// element of the profile's own lists (CheckValid).
type Profile struct {
	SampleType        []*ValueType
	DefaultSampleType string
	Sample            []*Sample
	Mapping           []*Mapping
	Location          []*Location
	Function          []*Function
	Comments          []string
	// TimeNanos is when the profile's window began (Unix nanoseconds);
	// DurationNanos how long it lasted. Zero leaves them out.
	TimeNanos     int64
	DurationNanos int64
	PeriodType    *ValueType
	Period        int64
}

// A ValueType names a sample value: its type ("calls") and unit ("count").
type ValueType struct {
	Type, Unit string
}

// A Sample is a list of values, one per sample type, at a stack of
// locations (the leaf first).
type Sample struct {
	Location []*Location
	Value    []int64
}

// A Mapping is a module's address range and file.
type Mapping struct {
	ID, Start, Limit, Offset uint64
	File, BuildID            string
	HasFunctions             bool
	HasFilenames             bool
	HasLineNumbers           bool
	HasInlineFrames          bool
}

// A Location is an address (0 for none) in a mapping, and the source lines
// there.
type Location struct {
	ID      uint64
	Mapping *Mapping
	Address uint64
	Line    []Line
}

// A Line is a line of a function.
type Line struct {
	Function *Function
	Line     int64
}

// A Function is a named function of a source file.
type Function struct {
	ID                         uint64
	Name, SystemName, Filename string
	StartLine                  int64
}

// ErrInvalid is wrapped by CheckValid's errors.
var ErrInvalid = errors.New("invalid pprof profile")

// CheckValid reports the first inconsistency of p that a pprof reader
// rejects: a sample whose values do not match the sample types, an ID of
// 0 or used twice, or a reference to a mapping, location or function that
// is not in p's lists.
func (p *Profile) CheckValid() error {
	mappings := make(map[*Mapping]bool, len(p.Mapping))
	ids := make(map[uint64]bool, len(p.Mapping))
	for _, m := range p.Mapping {
		if m == nil || m.ID == 0 || ids[m.ID] {
			return fmt.Errorf("%w: mapping %v: nil, ID 0 or an ID used twice", ErrInvalid, m)
		}
		ids[m.ID], mappings[m] = true, true
	}
	functions := make(map[*Function]bool, len(p.Function))
	clear(ids)
	for _, f := range p.Function {
		if f == nil || f.ID == 0 || ids[f.ID] {
			return fmt.Errorf("%w: function %v: nil, ID 0 or an ID used twice", ErrInvalid, f)
		}
		ids[f.ID], functions[f] = true, true
	}
	locations := make(map[*Location]bool, len(p.Location))
	clear(ids)
	for _, l := range p.Location {
		if l == nil || l.ID == 0 || ids[l.ID] {
			return fmt.Errorf("%w: location %v: nil, ID 0 or an ID used twice", ErrInvalid, l)
		}
		if l.Mapping != nil && !mappings[l.Mapping] {
			return fmt.Errorf("%w: location %d: its mapping is not in the profile", ErrInvalid, l.ID)
		}
		for _, ln := range l.Line {
			if ln.Function == nil || !functions[ln.Function] {
				return fmt.Errorf("%w: location %d: a line's function is not in the profile", ErrInvalid, l.ID)
			}
		}
		ids[l.ID], locations[l] = true, true
	}
	for i, s := range p.Sample {
		if s == nil {
			return fmt.Errorf("%w: sample %d is nil", ErrInvalid, i)
		}
		if len(s.Value) != len(p.SampleType) {
			return fmt.Errorf("%w: sample %d: %d values for %d sample types", ErrInvalid, i, len(s.Value), len(p.SampleType))
		}
		for _, l := range s.Location {
			if !locations[l] {
				return fmt.Errorf("%w: sample %d: a location is not in the profile", ErrInvalid, i)
			}
		}
	}
	return nil
}

// Write writes p to w as a gzipped protocol buffer, as pprof's tools read
// it.
func (p *Profile) Write(w io.Writer) error {
	zw := gzip.NewWriter(w)
	if _, err := zw.Write(p.Marshal()); err != nil {
		return err
	}
	return zw.Close()
}
