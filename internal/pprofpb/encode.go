package pprofpb

import "encoding/binary"

// The field numbers of pprof's profile.proto
// (github.com/google/pprof/proto/profile.proto), by message.
const (
	profileSampleType        = 1
	profileSample            = 2
	profileMapping           = 3
	profileLocation          = 4
	profileFunction          = 5
	profileStringTable       = 6
	profileTimeNanos         = 9
	profileDurationNanos     = 10
	profilePeriodType        = 11
	profilePeriod            = 12
	profileComment           = 13
	profileDefaultSampleType = 14

	valueTypeType = 1
	valueTypeUnit = 2

	sampleLocationID = 1
	sampleValue      = 2

	mappingID              = 1
	mappingStart           = 2
	mappingLimit           = 3
	mappingOffset          = 4
	mappingFilename        = 5
	mappingBuildID         = 6
	mappingHasFunctions    = 7
	mappingHasFilenames    = 8
	mappingHasLineNumbers  = 9
	mappingHasInlineFrames = 10

	locationID        = 1
	locationMappingID = 2
	locationAddress   = 3
	locationLine      = 4

	lineFunctionID = 1
	lineLine       = 2

	functionID         = 1
	functionName       = 2
	functionSystemName = 3
	functionFilename   = 4
	functionStartLine  = 5
)

// The wire types of the protocol buffer encoding
// (protobuf.dev/programming-guides/encoding, "Message Structure").
const (
	wireVarint = 0
	wireBytes  = 2
)

// An encoder appends a message's fields to buf. Strings become indexes
// into the profile's string table, which starts with "" as pprof requires.
type encoder struct {
	buf     []byte
	strings []string
	index   map[string]int64
}

// Marshal returns p encoded as a pprof protocol buffer, not compressed.
// Fields at their zero value are left out, as proto3 does; the string
// table lists each string once, in the order of first use.
func (p *Profile) Marshal() []byte {
	e := &encoder{strings: []string{""}, index: map[string]int64{"": 0}}
	for _, vt := range p.SampleType {
		e.message(profileSampleType, func() { e.valueType(vt) })
	}
	for _, s := range p.Sample {
		e.message(profileSample, func() {
			ids := make([]uint64, len(s.Location))
			for i, l := range s.Location {
				ids[i] = l.ID
			}
			e.packed(sampleLocationID, ids)
			vals := make([]uint64, len(s.Value))
			for i, v := range s.Value {
				vals[i] = uint64(v)
			}
			e.packed(sampleValue, vals)
		})
	}
	for _, m := range p.Mapping {
		e.message(profileMapping, func() { e.mapping(m) })
	}
	for _, l := range p.Location {
		e.message(profileLocation, func() { e.location(l) })
	}
	for _, f := range p.Function {
		e.message(profileFunction, func() {
			e.uint(functionID, f.ID)
			e.string(functionName, f.Name)
			e.string(functionSystemName, f.SystemName)
			e.string(functionFilename, f.Filename)
			e.uint(functionStartLine, uint64(f.StartLine))
		})
	}
	e.uint(profileTimeNanos, uint64(p.TimeNanos))
	e.uint(profileDurationNanos, uint64(p.DurationNanos))
	if p.PeriodType != nil {
		e.message(profilePeriodType, func() { e.valueType(p.PeriodType) })
	}
	e.uint(profilePeriod, uint64(p.Period))
	for _, c := range p.Comments {
		e.key(profileComment, wireVarint)
		e.buf = binary.AppendUvarint(e.buf, uint64(e.intern(c)))
	}
	e.string(profileDefaultSampleType, p.DefaultSampleType)
	// The string table goes last: only now is it complete. A reader
	// takes the fields in any order.
	for _, s := range e.strings {
		e.bytes(profileStringTable, s)
	}
	return e.buf
}

func (e *encoder) valueType(vt *ValueType) {
	e.string(valueTypeType, vt.Type)
	e.string(valueTypeUnit, vt.Unit)
}

func (e *encoder) mapping(m *Mapping) {
	e.uint(mappingID, m.ID)
	e.uint(mappingStart, m.Start)
	e.uint(mappingLimit, m.Limit)
	e.uint(mappingOffset, m.Offset)
	e.string(mappingFilename, m.File)
	e.string(mappingBuildID, m.BuildID)
	e.bool(mappingHasFunctions, m.HasFunctions)
	e.bool(mappingHasFilenames, m.HasFilenames)
	e.bool(mappingHasLineNumbers, m.HasLineNumbers)
	e.bool(mappingHasInlineFrames, m.HasInlineFrames)
}

func (e *encoder) location(l *Location) {
	e.uint(locationID, l.ID)
	if l.Mapping != nil {
		e.uint(locationMappingID, l.Mapping.ID)
	}
	e.uint(locationAddress, l.Address)
	for _, ln := range l.Line {
		e.message(locationLine, func() {
			e.uint(lineFunctionID, ln.Function.ID)
			e.uint(lineLine, uint64(ln.Line))
		})
	}
}

// key appends a field's tag: its number and wire type.
func (e *encoder) key(field int, wire int) {
	e.buf = binary.AppendUvarint(e.buf, uint64(field)<<3|uint64(wire))
}

// uint appends a varint field, unless v is 0. A negative int64 is its
// two's complement, ten bytes long, as protobuf's int64 encodes it.
func (e *encoder) uint(field int, v uint64) {
	if v == 0 {
		return
	}
	e.key(field, wireVarint)
	e.buf = binary.AppendUvarint(e.buf, v)
}

func (e *encoder) bool(field int, v bool) {
	if v {
		e.uint(field, 1)
	}
}

// string appends a field holding s's index in the string table, unless s
// is "" (index 0).
func (e *encoder) string(field int, s string) {
	e.uint(field, uint64(e.intern(s)))
}

// intern returns s's index in the string table, adding it at first use.
func (e *encoder) intern(s string) int64 {
	if i, ok := e.index[s]; ok {
		return i
	}
	i := int64(len(e.strings))
	e.strings = append(e.strings, s)
	e.index[s] = i
	return i
}

// bytes appends a length-delimited field holding s itself.
func (e *encoder) bytes(field int, s string) {
	e.key(field, wireBytes)
	e.buf = binary.AppendUvarint(e.buf, uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// packed appends a packed repeated varint field, unless vs is empty.
func (e *encoder) packed(field int, vs []uint64) {
	if len(vs) == 0 {
		return
	}
	n := 0
	for _, v := range vs {
		n += uvarintLen(v)
	}
	e.key(field, wireBytes)
	e.buf = binary.AppendUvarint(e.buf, uint64(n))
	for _, v := range vs {
		e.buf = binary.AppendUvarint(e.buf, v)
	}
}

// message appends an embedded message field whose fields body appends.
// The body is written in place and moved right by its length's size once
// that is known.
func (e *encoder) message(field int, body func()) {
	e.key(field, wireBytes)
	start := len(e.buf)
	body()
	n := uint64(len(e.buf) - start)
	size := uvarintLen(n)
	e.buf = append(e.buf, make([]byte, size)...)
	copy(e.buf[start+size:], e.buf[start:start+int(n)])
	binary.PutUvarint(e.buf[start:], n)
}

// uvarintLen is the size of v as a varint.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
