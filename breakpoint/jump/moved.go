package jump

import "slices"

// A trampoline moved to another process of the same program.
//
// A trampoline's code reaches original code, the counters and itself
// through rel32 displacements and %gs offsets: its bytes depend on the
// site's address and its own only through their difference, but for the
// absolute addresses of original code it holds (an emulated call's
// return address, a pending call's return address, the targets of a
// jump table's arcs), which it records (abs). A program run again maps
// at another address (ASLR), and its region where it was relative to it:
// the trampoline built for a site in one process, moved by that distance,
// is byte for byte the one a build in the next would make, at no cost of
// decoding or relocating (a test suite's hundred runs of one
// interpreter spent most of patchprof's time building the same
// trampolines again).

// Template returns a copy of tr as built, to be moved later (MovedTo):
// its code and exits are its own, so aiming tr's exits leaves it as it
// was. It returns nil for a gate, whose code stops the thread.
func (tr *Trampoline) Template() *Trampoline {
	if tr == nil || tr.gate || tr.Landing != 0 {
		return nil
	}
	c := *tr
	c.Code = slices.Clone(tr.Code)
	c.exits = slices.Clone(tr.exits)
	for k := range c.exits {
		if c.exits[k].Via != 0 {
			return nil // aimed already: not as built
		}
	}
	return &c
}

// Source returns how many bytes of original code from Addr tr was built
// from: the displaced bytes and its tail's.
func (tr *Trampoline) Source() int {
	n := tr.Len
	if tr.last != nil {
		n = max(n, int(tr.last.Addr-tr.Addr)+tr.last.Len)
	}
	return n
}

// MovedTo returns the trampoline a build for the site at addr would make
// at at, from template tr (Template), when the two are as far apart as
// tr's were; false otherwise. The caller checks that what the build would
// read is what tr was built from: the original bytes (Source), the
// counter offsets, and a jump table's arcs' targets moved alike.
func (tr *Trampoline) MovedTo(addr, at uint64) (*Trampoline, bool) {
	if at-addr != tr.At-tr.Addr {
		return nil, false
	}
	d := addr - tr.Addr
	m := *tr
	m.Addr, m.At = addr, at
	m.Code = slices.Clone(tr.Code)
	for _, w := range tr.abs {
		w.Shift(m.Code, d)
	}
	m.exits = slices.Clone(tr.exits)
	for k := range m.exits {
		m.exits[k].At += d
		m.exits[k].To += d
	}
	m.addrs = slices.Clone(tr.addrs)
	for k := range m.addrs {
		m.addrs[k] += d
	}
	if tr.last != nil {
		last := *tr.last
		last.Addr += d
		last.Slot += d
		last.Code = slices.Clone(tr.last.Code)
		for _, w := range last.Abs {
			w.Shift(last.Code, d)
		}
		last.ResumePoints = slices.Clone(last.ResumePoints)
		for k := range last.ResumePoints {
			last.ResumePoints[k].To += d
		}
		last.Exits = slices.Clone(last.Exits)
		for k := range last.Exits {
			last.Exits[k].To += d
		}
		m.last = &last
	}
	return &m, true
}
