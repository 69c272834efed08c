package profiler

import (
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/arch/x86/x86asm"
)

// asyncPreempt is the Go runtime's assembly function that a goroutine
// stopped by an asynchronous preemption (a SIGURG whose handler pushed the
// interrupted PC and made the thread call it) runs: it saves the
// registers, lets the scheduler run others, restores them and returns to
// the interrupted PC, on whatever thread runs the goroutine next.
var asyncPreempt = []string{"runtime.asyncPreempt.abi0", "runtime.asyncPreempt"}

// goResumePoints returns the link-time address of runtime.asyncPreempt's
// return instruction, where every asynchronously preempted goroutine
// resumes, or nil when the module has none. The in-process engine traps
// there (breakpoint.SiteSpec.Resume): a goroutine interrupted before a
// function was patched may resume in the middle of the bytes the patch
// now covers, and must be sent to the trampoline's copy of its
// instruction instead.
func goResumePoints(sym *symtab.File) []uint64 {
	for _, f := range sym.Funcs {
		if !nameIn(f, asyncPreempt) {
			continue
		}
		code, ok := sym.Code(f.Addr, int(f.Size))
		if !ok {
			return nil
		}
		var rets []uint64
		for off := 0; off < len(code); {
			inst, err := symtab.DecodeInst(code[off:])
			if err != nil {
				return nil // not the function we know: plant nothing
			}
			if inst.Op == x86asm.RET {
				rets = append(rets, f.Addr+uint64(off))
			}
			if code[off] == 0xCC {
				break // the padding after its code
			}
			off += inst.Len
		}
		if len(rets) == 1 {
			return rets
		}
		return nil
	}
	return nil
}

// nameIn reports whether one of f's names is in names.
func nameIn(f symtab.Func, names []string) bool {
	for _, n := range names {
		if f.Name == n {
			return true
		}
		for _, a := range f.Aliases {
			if a == n {
				return true
			}
		}
	}
	return false
}
