package watch

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// An Exe selects every process whose executable is the file at Path, by
// device and inode: a process of a binary since replaced at Path (a
// deploy's rename over it) is another file and is not selected, and one
// found while Path still named its file is watched to its end. Path is
// stat'ed at each Select, so the processes of a new binary at Path are
// found from the next poll on.
type Exe struct{ Path string }

// String says what e selects.
func (e Exe) String() string { return "--exe " + e.Path }

// Select scans /proc for processes whose /proc/PID/exe is Path's file.
// Processes that cannot be read (another user's, a zombie) are skipped.
func (e Exe) Select() ([]Proc, error) {
	var want syscall.Stat_t
	if err := syscall.Stat(e.Path, &want); err != nil {
		// Between a deploy's unlink and its new file: nothing to find.
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("--exe %s: %w", e.Path, err)
	}
	d, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("read /proc: %w", err)
	}
	self := os.Getpid()
	var out []Proc
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == self {
			continue
		}
		// stat(2) of the magic link reaches the file the process runs,
		// deleted or not (proc(5), /proc/PID/exe).
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+n+"/exe", &st) != nil || st.Dev != want.Dev || st.Ino != want.Ino {
			continue
		}
		start, err := startTime(pid)
		if err != nil {
			continue // gone meanwhile
		}
		out = append(out, Proc{PID: pid, Start: start})
	}
	return out, nil
}

// Match reports whether process pid runs Path's file.
func (e Exe) Match(pid int) (Proc, bool) {
	var want, st syscall.Stat_t
	if pid == os.Getpid() || syscall.Stat(e.Path, &want) != nil {
		return Proc{}, false
	}
	if syscall.Stat("/proc/"+strconv.Itoa(pid)+"/exe", &st) != nil || st.Dev != want.Dev || st.Ino != want.Ino {
		return Proc{}, false
	}
	start, err := startTime(pid)
	if err != nil {
		return Proc{}, false
	}
	return Proc{PID: pid, Start: start}, true
}

// startTime returns process pid's start time (/proc/PID/stat field 22).
func startTime(pid int) (uint64, error) {
	start, _, err := procStat(pid)
	return start, err
}

// procStat returns process pid's start time and parent's PID
// (/proc/PID/stat fields 22 and 4).
func procStat(pid int) (start uint64, ppid int, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	return parseStat(string(b))
}

// tracer returns the PID of process pid's tracer (0: none).
func tracer(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	return tracerPID(string(b))
}

// childAttrs makes a child patchprof get SIGTERM when the watcher dies
// (even by SIGKILL): it then detaches and saves, leaving its target as it
// found it (prctl(2), PR_SET_PDEATHSIG).
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// termSignal ends a child's profile (it detaches and saves), and
// snapshotSignal asks it for a profile of the moment.
var termSignal, snapshotSignal os.Signal = syscall.SIGTERM, syscall.SIGUSR1

// supported is true: /proc and ptrace are here.
const supported = true
