package relocate

import "testing"

// BenchmarkAmbiguousKnown is the check of an instruction whose verdict is
// kept: a trampoline's build asks it of every instruction it relocates.
func BenchmarkAmbiguousKnown(b *testing.B) {
	raw := []byte{0x48, 0x89, 0xe5} // mov %rsp, %rbp
	inst, err := Decode(raw)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ambiguous(raw, inst)
	}
}
