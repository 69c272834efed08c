package jump

import (
	"bytes"
	"testing"
)

// TestAppendEntryCounter checks the indexed update's bytes against GNU
// as's for `addq $1, %gs:0x1234(,REG,8)`.
func TestAppendEntryCounter(t *testing.T) {
	for _, tc := range []struct {
		ec   EntryCount
		want []byte
	}{
		{EntryCount{Counter: 0x1234, Reg: 0}, []byte{0x65, 0x67, 0x48, 0x83, 0x04, 0xc5, 0x34, 0x12, 0, 0, 1}},
		{EntryCount{Counter: 0x1234, Reg: 9}, []byte{0x65, 0x67, 0x4a, 0x83, 0x04, 0xcd, 0x34, 0x12, 0, 0, 1}},
		{EntryCount{Counter: 0x1234, Reg: 2, Wide: true}, []byte{0x65, 0x48, 0x83, 0x04, 0xd5, 0x34, 0x12, 0, 0, 1}},
		{EntryCount{Counter: 0x1234, Reg: 12, Wide: true}, []byte{0x65, 0x4a, 0x83, 0x04, 0xe5, 0x34, 0x12, 0, 0, 1}},
	} {
		if got := appendEntryCounter(nil, tc.ec); !bytes.Equal(got, tc.want) {
			t.Errorf("appendEntryCounter(%+v) = % x, want % x", tc.ec, got, tc.want)
		}
	}
}

// TestTrampolineCountsEntry: a dispatch's trampoline counts its hit, then
// its entry, then runs its block; a thread between the two updates has no
// original equivalent.
func TestTrampolineCountsEntry(t *testing.T) {
	// mov %eax,%eax; lea 0x0(,%rax,4),%rdx (a -O0 dispatch's start).
	code := []byte{0x89, 0xc0, 0x48, 0x8d, 0x14, 0x85, 0, 0, 0, 0}
	const addr, at = 0x401000, 0x7f0000
	js := Site{Len: len(code), Insns: []int{2, 8}, TableEntry: &EntryCount{Counter: 0x800, Reg: 0}}
	tr, err := BuildTrampoline(code, addr, at, js, 0x10)
	if err != nil {
		t.Fatal(err)
	}
	want := append(appendCounter(nil, 0x10), appendEntryCounter(nil, *js.TableEntry)...)
	if !bytes.HasPrefix(tr.Code, want) {
		t.Fatalf("trampoline starts % x, want % x", tr.Code[:len(want)], want)
	}
	if orig, p := tr.Where(at); p != BeforeCount || orig != addr {
		t.Errorf("Where(start) = %#x, %v; want the site, BeforeCount", orig, p)
	}
	if _, p := tr.Where(at + counterLen); p != Inside {
		t.Errorf("Where(the entry's update) = %v, want Inside", p)
	}
	if orig, p := tr.Where(at + uint64(len(want))); p != Counted || orig != addr {
		t.Errorf("Where(after both) = %#x, %v; want the site, Counted", orig, p)
	}
	js.KeepFlags = true
	if _, err := BuildTrampoline(code, addr, at, js, 0x10); err == nil {
		t.Error("an entry counted with the flags kept: no error")
	}
}
