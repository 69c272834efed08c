package main

import (
	"io"
	"os"
	"strconv"
)

// A terminal describes where a listing goes: whether it is a terminal, and
// how wide the listing may be (0: the default width).
type terminal struct {
	isTerminal bool
	width      int
}

// terminalOf describes w: a terminal when w is an *os.File on a terminal
// device (and TERM is not "dumb"). On a terminal the width is COLUMNS when
// it is set to a positive number, else the terminal's own width; a file or
// pipe gets the default width, so saved listings do not depend on the
// window they were made in.
func terminalOf(w io.Writer) terminal {
	var t terminal
	if p, ok := w.(*progress); ok {
		w = p.w
	}
	f, ok := w.(*os.File)
	if !ok || !isTerminal(f.Fd()) || os.Getenv("TERM") == "dumb" {
		return t
	}
	t.isTerminal = true
	t.width = terminalWidth(f.Fd())
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		t.width = n
	}
	return t
}

// noColor reports whether the user asked for no colour with a non-empty
// NO_COLOR variable (https://no-color.org).
func noColor() bool {
	return os.Getenv("NO_COLOR") != ""
}
