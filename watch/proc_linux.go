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
	want, err := statID(e.Path)
	if err != nil {
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
	self := selfPID
	var out []Proc
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == self || exeOf(pid) != want {
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
	want, err := statID(e.Path)
	if pid == selfPID || err != nil || exeOf(pid) != want {
		return Proc{}, false
	}
	start, err := startTime(pid)
	if err != nil {
		return Proc{}, false
	}
	return Proc{PID: pid, Start: start}, true
}

// statID returns the device and inode of the file at path.
func statID(path string) (fileID, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileID{}, err
	}
	return fileID{st.Dev, st.Ino}, nil
}

// exeOf returns the file process pid runs, zero when it cannot be read:
// stat(2) of the magic link reaches it, deleted or not (proc(5),
// /proc/PID/exe).
func exeOf(pid int) fileID {
	id, _ := statID("/proc/" + strconv.Itoa(pid) + "/exe")
	return id
}

// startTime returns process pid's start time (/proc/PID/stat field 22).
func startTime(pid int) (uint64, error) {
	start, _, err := procStat(pid)
	return start, err
}

// procStat returns process pid's start time and parent's PID
// (/proc/PID/stat fields 22 and 4).
func procStat(pid int) (start uint64, ppid int, err error) {
	b, err := readFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	return parseStat(string(b))
}

// tracer returns the PID of process pid's tracer (0: none).
func tracer(pid int) int {
	b, err := readFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	return tracerPID(string(b))
}

// readFile returns the contents of a small file of /proc or of the cgroup
// file system with three system calls (open, read to the end, close):
// os.ReadFile also asks fcntl and epoll whether the file can be polled,
// and stats it, which quadruples a look's calls (the watch reads such
// files by the hundred).
func readFile(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	b := make([]byte, 0, 1024)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
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
