package monitor

// A Layout is the code of one traced process at one moment, as the monitor
// knows it: the profiled images mapped there, and the scratch regions the
// engine mapped for them. A CPU-time sampler resolves the addresses it
// samples through the layout that was in force at the sample's time.
type Layout struct {
	PID     int      // the process (thread group)
	Maps    []Mapped // the profiled images mapped, with their load biases
	Scratch []Scratch
}

// A Scratch is one region of the target's memory that the monitor maps
// and runs the program's own instructions from (the out-of-line engine's
// slots; a jump engine's trampolines). Time spent there belongs to the
// instruction it stands for.
type Scratch struct {
	Lo, Hi uint64 // runtime range
	// Original returns the runtime address of the program's instruction
	// that the code at pc (in [Lo, Hi)) stands for. It may be called from
	// any goroutine, at any time after the layout was reported.
	Original func(pc uint64) uint64
	// Pushed returns how far below the stack pointer of the instruction
	// it stands for the code at pc has moved it (a trampoline's entry
	// check pushes registers); nil for none. The same goroutines may call
	// it as Original.
	Pushed func(pc uint64) uint64
}

// Original returns the runtime address in the program's own code that pc
// stands for: pc itself, unless it lies in one of l's scratch regions.
func (l *Layout) Original(pc uint64) uint64 {
	for _, s := range l.Scratch {
		if pc >= s.Lo && pc < s.Hi {
			return s.Original(pc)
		}
	}
	return pc
}

// Pushed returns how far the code at pc has moved the stack pointer below
// that of the instruction it stands for (Scratch.Pushed): 0 outside the
// scratch regions.
func (l *Layout) Pushed(pc uint64) uint64 {
	for _, s := range l.Scratch {
		if pc >= s.Lo && pc < s.Hi && s.Pushed != nil {
			return s.Pushed(pc)
		}
	}
	return 0
}

// Find returns the image mapping that holds the runtime address pc.
func (l *Layout) Find(pc uint64) (Mapped, bool) {
	for _, mp := range l.Maps {
		if pc >= mp.Lo && pc < mp.Hi {
			return mp, true
		}
	}
	return Mapped{}, false
}
