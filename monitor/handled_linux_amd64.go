package monitor

// noteHandled records in the result a fault delivered to a handler of the
// program, with the original address noteFault found (outside any slot
// or trampoline), when it lies in a profiled image.
//
// Preconditions: on the tracer thread; t is in the signal-delivery-stop
// st, and noteFault has run for it.
func (m *mon) noteHandled(t *thread, st *sigStop) {
	f := m.faults[t.tgid]
	if f == nil || !st.fault() || !caught(t.tid, st.sig) {
		return
	}
	for _, mp := range t.mm.maps {
		if f.PC >= mp.Lo && f.PC < mp.Hi && mp.Image != nil {
			m.res.Handled = append(m.res.Handled, HandledFault{Image: mp.Image, Addr: f.PC - mp.Bias})
			return
		}
	}
}
