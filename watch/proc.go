package watch

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// A Proc is one process: its PID and its start time in clock ticks after
// boot (/proc/PID/stat field 22), which together name it across PID reuse.
type Proc struct {
	PID   int
	Start uint64
}

func (p Proc) String() string { return "PID " + strconv.Itoa(p.PID) }

// A fileID is a file's device and inode; the zero value is unknown.
type fileID struct{ dev, ino uint64 }

// A Selector lists the running processes a watch wants.
type Selector interface {
	// Select returns the processes wanted now.
	Select() ([]Proc, error)
	// String says what is selected, for messages ("--exe /usr/bin/x").
	String() string
}

// A Matcher is a Selector that can also say whether one process is
// wanted: a watch woken by the kernel's process events then checks only
// the processes the events name, not every process of the host.
type Matcher interface {
	Match(pid int) (Proc, bool)
}

// selfPID is the watch's own PID, never selected (os.Getpid is a system
// call each time, and a look asks for it at each process).
var selfPID = os.Getpid()

// A procEvent is one process the kernel's process events name: made by a
// fork of Parent (Fork set), or exec'ed.
type procEvent struct {
	PID, Parent int
	Fork        bool
}

// ErrUnsupported is returned where /proc cannot be scanned: patchprof
// watch runs on Linux only.
var ErrUnsupported = errors.New("patchprof watch needs Linux's /proc")

// A PIDFile selects the process whose PID a file holds (a daemon's pid
// file, rewritten at each restart), when it runs.
type PIDFile struct{ Path string }

// String says what p selects.
func (p PIDFile) String() string { return "--pid-file " + p.Path }

// Select reads the PID in the file: none when the file is missing or the
// process is gone (a daemon between two restarts), an error when the file
// holds no PID.
func (p PIDFile) Select() ([]Proc, error) {
	b, err := os.ReadFile(p.Path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--pid-file %s: %w", p.Path, err)
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return nil, nil // being rewritten
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil || pid <= 0 {
		return nil, fmt.Errorf("--pid-file %s holds %q, not a process ID", p.Path, f[0])
	}
	start, err := startTime(pid)
	if err != nil {
		return nil, nil // gone
	}
	return []Proc{{PID: pid, Start: start}}, nil
}

// parseStat returns the start time (field 22) and the parent PID (field 4)
// of a /proc/PID/stat line. The command name (field 2) may hold spaces and
// parentheses: the fields after it are counted from its last ')' (proc(5)).
func parseStat(s string) (start uint64, ppid int, err error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("stat %q: no command name", s)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): field N is f[N-3].
	if len(f) < 20 {
		return 0, 0, fmt.Errorf("stat %q: %d fields after the name, want 20", s, len(f))
	}
	ppid, err = strconv.Atoi(f[1])
	if err != nil {
		return 0, 0, fmt.Errorf("stat: parent PID %q: %w", f[1], err)
	}
	start, err = strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("stat: start time %q: %w", f[19], err)
	}
	return start, ppid, nil
}

// tracerPID returns the TracerPid line's value of a /proc/PID/status text
// (0: not traced).
func tracerPID(status string) int {
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, "TracerPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}
