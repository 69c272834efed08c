package lineinfo

import (
	"errors"
	"reflect"
	"testing"
)

// TestEncodeRoundTrip: a table and the subprograms read back from their
// encodings equal what Read and Subprograms returned, unexported fields
// included (reflect.DeepEqual compares them), for DWARF 4 and 5.
func TestEncodeRoundTrip(t *testing.T) {
	for _, flags := range [][]string{{"-g", "-O0", "-gdwarf-4"}, {"-g", "-O0", "-gdwarf-5"}, {"-g", "-O2"}} {
		exe, _ := buildC(t, flags...)
		tab, err := Read(exe)
		if err != nil {
			t.Fatal(err)
		}
		b, err := tab.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalTable(b)
		if err != nil {
			t.Fatalf("%v: %v", flags, err)
		}
		if !reflect.DeepEqual(got, tab) {
			t.Errorf("%v: the decoded table differs:\n got %+v\nwant %+v", flags, got, tab)
		}
		subs, err := Subprograms(exe)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := MarshalSubprograms(subs)
		if err != nil {
			t.Fatal(err)
		}
		gotSubs, err := UnmarshalSubprograms(sb)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(gotSubs, subs) {
			t.Errorf("%v: the decoded subprograms differ:\n got %+v\nwant %+v", flags, gotSubs, subs)
		}
		// Every prefix of an encoding, and flipped bytes, are errors or
		// a table, never a panic.
		for n := range b {
			if _, err := UnmarshalTable(b[:n]); err == nil {
				t.Fatalf("%v: a table cut to %d of %d bytes decoded", flags, n, len(b))
			}
		}
		for i := range b {
			c := append([]byte(nil), b...)
			c[i] ^= 0xff
			UnmarshalTable(c)
		}
		for n := range sb {
			if _, err := UnmarshalSubprograms(sb[:n]); err == nil {
				t.Fatalf("%v: subprograms cut to %d of %d bytes decoded", flags, n, len(sb))
			}
		}
		for i := range sb {
			c := append([]byte(nil), sb...)
			c[i] ^= 0xff
			UnmarshalSubprograms(c)
		}
	}
}

func TestEncodeDeferred(t *testing.T) {
	tab := &Table{deferred: &deferred{}}
	if _, err := tab.MarshalBinary(); !errors.Is(err, ErrDeferred) {
		t.Errorf("MarshalBinary of a table with deferred units: %v, want ErrDeferred", err)
	}
}
