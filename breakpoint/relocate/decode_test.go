package relocate

import (
	"testing"

	"golang.org/x/arch/x86/x86asm"
)

// TestAmbiguousVerdictKept checks the verdict cache of ambiguous: a verdict
// is kept per encoding and operation, served again for both, and an
// encoding read as another operation is judged afresh.
func TestAmbiguousVerdictKept(t *testing.T) {
	raw := []byte{0x48, 0x83, 0xc0, 0x01} // add rax, 1
	inst, err := x86asm.Decode(raw, 64)
	if err != nil {
		t.Fatal(err)
	}
	if ambiguous(raw, inst) || ambiguous(raw, inst) {
		t.Fatal("add rax, 1 judged ambiguous")
	}
	verdicts.Lock()
	v, ok := verdicts.m[string(raw)]
	verdicts.m[string(raw)] = verdict{op: inst.Op, ambiguous: true} // as if it were
	verdicts.Unlock()
	t.Cleanup(func() {
		verdicts.Lock()
		delete(verdicts.m, string(raw))
		verdicts.Unlock()
	})
	if !ok || v.op != inst.Op || v.ambiguous {
		t.Fatalf("kept verdict %+v (%v), want %v not ambiguous", v, ok, inst.Op)
	}
	if !ambiguous(raw, inst) {
		t.Error("the kept verdict was not served")
	}
	// Read as another operation (which its bytes do not decode to), it
	// is judged again, and that verdict replaces the kept one.
	other := inst
	other.Op = x86asm.SUB
	if !ambiguous(raw, other) {
		t.Error("add rax, 1 read as sub: not judged ambiguous")
	}
	verdicts.Lock()
	v = verdicts.m[string(raw)]
	verdicts.Unlock()
	if v.op != x86asm.SUB {
		t.Errorf("kept verdict for %v, want the new judgment's SUB", v.op)
	}
}
