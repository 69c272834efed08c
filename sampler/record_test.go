package sampler

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// sampleRecord encodes one PERF_RECORD_SAMPLE as the kernel writes it.
func sampleRecord(s Sample) []byte {
	b := make([]byte, sampleSize)
	binary.LittleEndian.PutUint32(b, recordSample)
	binary.LittleEndian.PutUint16(b[6:], sampleSize)
	binary.LittleEndian.PutUint64(b[8:], s.IP)
	binary.LittleEndian.PutUint32(b[16:], s.PID)
	binary.LittleEndian.PutUint32(b[20:], s.TID)
	binary.LittleEndian.PutUint64(b[24:], s.Time)
	return b
}

func lostRecord(n uint64) []byte {
	b := make([]byte, 24)
	binary.LittleEndian.PutUint32(b, recordLost)
	binary.LittleEndian.PutUint16(b[6:], 24)
	binary.LittleEndian.PutUint64(b[16:], n)
	return b
}

func TestParse(t *testing.T) {
	a := Sample{PID: 10, TID: 11, Time: 12345, IP: 0x401136}
	b := Sample{PID: 10, TID: 12, Time: 12346, IP: 0x7f0000001000}
	throttle := make([]byte, 24) // PERF_RECORD_THROTTLE: skipped
	binary.LittleEndian.PutUint32(throttle, 5)
	binary.LittleEndian.PutUint16(throttle[6:], 24)
	var in []byte
	in = append(in, sampleRecord(a)...)
	in = append(in, lostRecord(7)...)
	in = append(in, throttle...)
	in = append(in, sampleRecord(b)...)
	var lost uint64
	got, err := parse(in, false, nil, &lost)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []Sample{a, b}) || lost != 7 {
		t.Errorf("parse = %+v, lost %d; want [%+v %+v], lost 7", got, lost, a, b)
	}
}

func TestParseBad(t *testing.T) {
	short := sampleRecord(Sample{})
	binary.LittleEndian.PutUint16(short[6:], 16) // a sample too short for its fields
	for name, in := range map[string][]byte{
		"truncated header": {9, 0, 0},
		"size past end":    sampleRecord(Sample{})[:20],
		"size zero":        make([]byte, 8),
		"short sample":     short[:16],
	} {
		var lost uint64
		if _, err := parse(in, false, nil, &lost); !errors.Is(err, ErrBadRecord) {
			t.Errorf("%s: err = %v, want ErrBadRecord", name, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sampleRecord(Sample{PID: 1, TID: 1, IP: 1}))
	f.Add(lostRecord(3))
	f.Add([]byte{9, 0, 0, 0, 0, 0, 8, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var lost uint64
		parse(b, false, nil, &lost) // must not panic
	})
}

// chainRecord encodes a PERF_RECORD_SAMPLE with a call chain (chain: its
// entries as the kernel lists them, markers and the sampled ip included).
func chainRecord(s Sample, chain []uint64) []byte {
	b := sampleRecord(s)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(chain)))
	for _, pc := range chain {
		b = binary.LittleEndian.AppendUint64(b, pc)
	}
	binary.LittleEndian.PutUint16(b[6:], uint16(len(b)))
	return b
}

// withTop appends to a chainRecord the user stack's dump of one word,
// top, as PERF_SAMPLE_STACK_USER writes it (dyn 0: the kernel read none).
func withTop(rec []byte, top, dyn uint64) []byte {
	rec = binary.LittleEndian.AppendUint64(rec, 8)
	rec = binary.LittleEndian.AppendUint64(rec, top)
	rec = binary.LittleEndian.AppendUint64(rec, dyn)
	binary.LittleEndian.PutUint16(rec[6:], uint16(len(rec)))
	return rec
}

// TestParseChain checks a sample's call chain: the PERF_CONTEXT_USER
// marker and the sampled ip, which the chain lists first, left out, the
// return addresses kept innermost first.
func TestParseChain(t *testing.T) {
	const user = ^uint64(512 - 1) // PERF_CONTEXT_USER, -512
	a := Sample{PID: 10, TID: 11, Time: 1, IP: 0x401136}
	in := chainRecord(a, []uint64{user, 0x401136, 0x401200, 0x401300})
	in = append(in, withTop(chainRecord(Sample{PID: 10, TID: 11, Time: 2, IP: 0x401000}, []uint64{user, 0x401000}), 0x401234, 8)...)
	in = append(in, withTop(chainRecord(Sample{PID: 10, TID: 11, Time: 3, IP: 0x401000}, []uint64{user, 0x401000}), 0x401234, 0)...)
	var lost uint64
	got, err := parse(in, false, nil, &lost)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !reflect.DeepEqual(got[0].Callers, []uint64{0x401200, 0x401300}) || len(got[1].Callers) != 0 || got[0].IP != a.IP ||
		got[0].Top != 0 || got[1].Top != 0x401234 || got[2].Top != 0 {
		t.Errorf("parse = %+v; want callers [0x401200 0x401300], then none; tops 0, 0x401234, 0 (not dumped)", got)
	}
	bad := chainRecord(a, []uint64{user, 0x401136})
	binary.LittleEndian.PutUint64(bad[sampleSize:], 5) // 5 entries in 2's room
	if _, err := parse(bad, false, nil, &lost); !errors.Is(err, ErrBadRecord) {
		t.Errorf("parse of a chain longer than its record: %v, want ErrBadRecord", err)
	}
}
