//go:build !linux

package watch

import (
	"os"
	"syscall"
)

// An Exe selects every process whose executable is the file at Path; it
// needs Linux's /proc, and elsewhere Select returns ErrUnsupported.
type Exe struct{ Path string }

// String says what e selects.
func (e Exe) String() string { return "--exe " + e.Path }

// Match reports false: there is no /proc to read.
func (e Exe) Match(pid int) (Proc, bool) { return Proc{}, false }

// Select returns ErrUnsupported.
func (e Exe) Select() ([]Proc, error) { return nil, ErrUnsupported }

func startTime(pid int) (uint64, error) { return 0, ErrUnsupported }

func exeOf(pid int) fileID { return fileID{} }

func procStat(pid int) (uint64, int, error) { return 0, 0, ErrUnsupported }

// procEvents is the kernel's process events connector: Linux only.
type procEvents struct{}

func openProcEvents(bool) (*procEvents, error)      { return nil, ErrUnsupported }
func (*procEvents) Wait() ([]procEvent, bool, bool) { return nil, false, false }
func (*procEvents) Close() error                    { return nil }

func tracer(pid int) int { return 0 }

// readFile is os.ReadFile: there is no /proc to read cheaply.
func readFile(path string) ([]byte, error) { return os.ReadFile(path) }

func childAttrs() *syscall.SysProcAttr { return nil }

// termSignal and snapshotSignal: no child runs outside Linux.
var termSignal, snapshotSignal os.Signal = os.Interrupt, os.Interrupt

// supported is false: the watch scans /proc and attaches with ptrace.
const supported = false
