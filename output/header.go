package output

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// PinnedNote is the note of a profile whose target ran on one CPU
// (--pin). The target then saw one CPU (nproc, GOMAXPROCS), which can
// change what it did, so the report says it on its first line
// (pinnedSuffix) instead of among the notes; being a note, it is saved
// with the profile and `patchprof report` says it too.
const PinnedNote = "the target ran on one CPU (--pin): it saw one CPU (nproc, GOMAXPROCS); --pin=false keeps its CPUs"

// pinnedSuffix ends the header of a profile with PinnedNote.
const pinnedSuffix = " (run on one CPU: --pin)"

// header writes the report's first line: the program and how it ended.
func (r *report) header() {
	p := r.p
	prog := p.Executable
	if len(p.Args) > 0 && p.Args[0] != "" {
		prog = p.Args[0]
	}
	if prog == "" {
		prog = "the target"
	}
	e := p.Exit
	var b strings.Builder
	b.WriteString("patchprof: ")
	b.WriteString(escapeControl(prog))
	switch {
	case e.Detached && e.Changed:
		b.WriteString(" detached: it runs on, but patchprof could not undo all its changes (see the notes)")
	case e.Detached:
		b.WriteString(" detached: it runs on, unharmed")
	case e.Running:
		b.WriteString(" is running: interim report")
	case e.Code != nil:
		fmt.Fprintf(&b, " exited with code %d", *e.Code)
	case e.Signal != "":
		b.WriteString(" killed by ")
		b.WriteString(e.Signal)
		if e.FaultAddress != nil {
			fmt.Fprintf(&b, " (fault address %s)", e.FaultAddress)
		}
		// The frame: where the target died, or, when PC lies outside the
		// code patchprof read, the call in that code that led there.
		var frame strings.Builder
		if e.Function != "" {
			frame.WriteString(" in ")
			frame.WriteString(escapeControl(DisplayName(e.Function)))
		}
		if e.File != "" {
			frame.WriteString(" at ")
			frame.WriteString(r.display(e.File))
			if e.Line > 0 {
				frame.WriteString(":")
				frame.WriteString(strconv.Itoa(e.Line))
			}
		}
		if e.PCOutside && e.PC != nil {
			fmt.Fprintf(&b, " at %s, outside the profiled code", e.PC)
			if frame.Len() > 0 {
				b.WriteString(", called from")
				if e.Function != "" {
					b.WriteString(strings.TrimPrefix(frame.String(), " in"))
				} else {
					b.WriteString(strings.TrimPrefix(frame.String(), " at"))
				}
			}
		} else {
			b.WriteString(frame.String())
		}
	default:
		b.WriteString(" ended with unknown status")
	}
	if slices.Contains(p.Notes, PinnedNote) {
		b.WriteString(pinnedSuffix)
	}
	r.line(b.String())
}
