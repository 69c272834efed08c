//go:build linux && amd64

package monitor

// Signals and the in-process engine: a handler must never see a PC in a
// trampoline, and a handler's return must never land inside the bytes a
// jump patch covers.

import (
	"fmt"

	"github.com/patchprof/patchprof/breakpoint/jump"
)

// outOfTrampoline runs before a signal is delivered to t: a handler must see
// the program's own PC (Go's sigpanic and tracebacks need a PC inside the
// function; a fault must look as it would without patchprof). A fault in a
// displaced instruction is reported at its original address; an
// asynchronous signal is delivered before the counter update (the thread
// counts again when the handler returns to the site) or once the thread has
// stepped out of the trampoline. It returns false when the signal is no
// longer to be delivered from this stop (t was stepped: the caller resumes
// it with the saved siginfo).
//
// Preconditions: on the tracer thread; t is in the signal-delivery-stop st.
func (m *mon) outOfTrampoline(t *thread, st *sigStop) {
	if t.mm.dead || t.mm.ctr == nil {
		return
	}
	pc, err := peekUser(t.tid, offRip)
	if err != nil {
		return
	}
	mp, i, tr := t.mm.trampolineAt(pc)
	if tr == nil {
		return
	}
	orig, p := tr.Where(pc)
	fault := st.fault()
	switch {
	case p == jump.BeforeCount, p == jump.Counted:
		if p == jump.Counted && !fault {
			m.uncount(t, mp, i)
		}
	case p == jump.InDisplaced && (fault || !tr.Covers(orig)):
	default:
		// In the middle of the displaced instructions, whose original
		// bytes are the patch: step to where the program can be.
		var info siginfo
		have := getSiginfo(t.tid, &info) == nil
		if s := m.leaveScratch(t, false); s != 0 {
			m.resend(t, s)
		}
		if have {
			if err := setSiginfo(t.tid, &info); err != nil {
				m.lose(fmt.Errorf("restore the siginfo of signal %d for thread %d: %w", st.sig, t.tid, err))
			}
		}
		return
	}
	if err := pokeUser(t.tid, offRip, orig); err != nil {
		m.lose(fmt.Errorf("move thread %d out of its trampoline: %w", t.tid, err))
	}
}

// afterSigreturn puts a thread that a signal handler returned into the
// middle of a patched site (a fault reported there, a handler that fixed
// its cause) at the equivalent place of the trampoline.
//
// Preconditions: on the tracer thread; t is at the exit of rt_sigreturn.
func (m *mon) afterSigreturn(t *thread) {
	if t.mm.ctr == nil || t.mm.dead {
		return
	}
	pc, err := peekUser(t.tid, offRip)
	if err != nil {
		return
	}
	if t.mm.landingAt(pc) != nil {
		return // about to jump to a short site's trampoline
	}
	if tr := t.mm.coveredBy(pc); tr != nil {
		if to, ok := tr.Equivalent(pc); ok {
			if err := pokeUser(t.tid, offRip, to); err != nil {
				m.lose(fmt.Errorf("move thread %d into its trampoline: %w", t.tid, err))
			}
		}
	}
}
