package lineinfo

import (
	"reflect"
	"slices"
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

// TestEncodeDeferred encodes a Go program's table read with DeferGoStd,
// whose runtime units are left unrun, and decodes it: the same rows,
// still none of the runtime's read, and Lookup then runs them and finds
// what the whole table finds.
func TestEncodeDeferred(t *testing.T) {
	exe, _, full, part := readGoBoth(t)
	b, err := part.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalTable(b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Rows, part.Rows) || !slices.Equal(got.Files, part.Files) || got.GoRoot() != part.GoRoot() {
		t.Fatalf("decoded %d rows of %d files, want %d of %d", len(got.Rows), len(got.Files), len(part.Rows), len(part.Files))
	}
	runtimeMain, _ := symbol(t, exe, "runtime.main")
	if _, _, ok := got.LookupRead(runtimeMain); ok {
		t.Errorf("LookupRead(runtime.main) found a line in a unit left unread")
	}
	gf, gl, gok := got.Lookup(runtimeMain)
	wf, wl, wok := full.Lookup(runtimeMain)
	if gf != wf || gl != wl || gok != wok || !wok {
		t.Errorf("Lookup(runtime.main) = %s:%d %v decoded, %s:%d %v in the whole table", gf, gl, gok, wf, wl, wok)
	}
	for n := 0; n < len(b); n += 1 + len(b)/500 {
		if _, err := UnmarshalTable(b[:n]); err == nil {
			t.Fatalf("table cut to %d of %d bytes decoded", n, len(b))
		}
	}
	if _, err := UnmarshalTable(b[:len(b)-1]); err == nil {
		t.Fatalf("table cut by its last byte decoded")
	}
}
