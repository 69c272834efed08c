package sampler

import (
	"encoding/binary"
	"errors"
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
	got, err := parse(in, nil, &lost)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != a || got[1] != b || lost != 7 {
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
		if _, err := parse(in, nil, &lost); !errors.Is(err, ErrBadRecord) {
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
		parse(b, nil, &lost) // must not panic
	})
}
