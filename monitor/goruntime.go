package monitor

// GoRuntime is what the monitor reads of a Go program's runtime to attach
// to it without system-call stops (goquiet_linux_amd64.go). Addresses are
// link-time; an offset is a field's byte offset in its structure, read from
// the program's debugging information. A zero address means unknown.
type GoRuntime struct {
	// ResumeRoom is how many bytes from the Resume site (asyncPreempt's
	// ret) to the next function: what a gate's patch may cover.
	ResumeRoom uint64
	// AllM is the address of runtime.allm, the head of the list of every
	// M (OS thread the runtime made or adopted).
	AllM uint64
	// IsCgo is the address of runtime.iscgo, true in a program linked
	// with cgo, whose threads may have signal stacks of C's own.
	IsCgo uint64
	// Offsets says that the six offsets below were all found.
	Offsets bool
	// MProcID, MGSignal and MAllLink are the offsets of an m's procid
	// (its thread ID), gsignal (the g whose stack is the thread's
	// sigaltstack) and alllink (the next m).
	MProcID, MGSignal, MAllLink uint64
	// GStack is the offset of a g's stack, StackLo and StackHi those of a
	// stack's bounds.
	GStack, StackLo, StackHi uint64
	// MIsExtra is the offset of an m's isextra (an M lent to a thread C
	// made, when it calls Go), valid when IsExtraKnown. A program linked
	// with cgo needs it.
	MIsExtra     uint64
	IsExtraKnown bool
}
