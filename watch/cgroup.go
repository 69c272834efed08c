package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A Cgroup selects every process in a cgroup v2 subtree: the PIDs in the
// cgroup.procs file of Dir and of each cgroup below it (cgroup-v2.rst,
// "Organizing Processes"). A systemd service's processes are those of its
// unit's cgroup, /system.slice/NAME.service, whatever they exec, so a
// service's workers are found without naming their binary. Reading a few
// small files is what makes a short poll cheap: the cost grows with the
// cgroup's new processes, not with the host's (Exe stats every process),
// since a member's start time is kept from the look that found it.
type Cgroup struct {
	// Dir is the cgroup's directory in the cgroup v2 file system
	// (CgroupDir resolves a cgroup path to it); Name is what the user
	// gave, for messages.
	Dir, Name string
	// known holds the members of the last look, by PID: a member still
	// listed is not read again.
	known map[int]member
}

// A member is what a Cgroup keeps of one process it listed: its start
// time, and whether it is one of the watch's own children.
type member struct {
	start uint64
	ours  bool
}

// String says what c selects.
func (c *Cgroup) String() string { return "--cgroup " + c.Name }

// Select reads the cgroup.procs file of c's cgroup and of every cgroup
// below it. A cgroup removed meanwhile (a unit stopped, a child cgroup of
// a finished job) holds nothing; the watch itself and its own children
// (the patchprof attached to each process, should the watch run in the
// subtree it watches) are never selected.
//
// Only a PID not listed at the last look is read (/proc/PID/stat); a PID
// listed at both keeps its start time. That is wrong only if the PID was
// reused in between with both processes in the subtree: the host must
// have made pid_max processes between two looks, which are at most
// --poll apart while processes are made (each fork wakes a watch woken
// by process events; a polling one looks every --poll anyway).
func (c *Cgroup) Select() ([]Proc, error) {
	pids, err := c.list()
	if err != nil {
		return nil, err
	}
	self := selfPID
	next := make(map[int]member, len(pids))
	var out []Proc
	for _, pid := range pids {
		if pid == self {
			continue
		}
		m, ok := c.known[pid]
		if !ok {
			start, ppid, err := procStat(pid)
			if err != nil {
				continue // gone meanwhile
			}
			m = member{start: start, ours: ppid == self}
		}
		next[pid] = m
		if !m.ours {
			out = append(out, Proc{PID: pid, Start: m.start})
		}
	}
	c.known = next
	return out, nil
}

// list returns the PIDs in the cgroup.procs files of c's subtree.
func (c *Cgroup) list() ([]int, error) {
	var pids []int
	err := filepath.WalkDir(c.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while walked
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		b, err := readFile(filepath.Join(path, "cgroup.procs"))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		ps, err := parseProcs(string(b))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		pids = append(pids, ps...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("--cgroup %s: %w", c.Name, err)
	}
	return pids, nil
}

// parseProcs reads a cgroup.procs file: one PID a line.
func parseProcs(s string) ([]int, error) {
	var pids []int
	for _, f := range strings.Fields(s) {
		pid, err := strconv.Atoi(f)
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("cgroup.procs holds %q, not a process ID", f)
		}
		pids = append(pids, pid)
	}
	return pids, nil
}

// ErrNoCgroup is returned by CgroupDir when the cgroup is not found.
var ErrNoCgroup = errors.New("no such cgroup")

// CgroupDir resolves a cgroup given as a directory of a cgroup v2 file
// system, or as a path inside the hierarchy (/system.slice/x.service, as
// /proc/PID/cgroup and systemctl show it) under this host's cgroup v2
// mount, to its directory. The error wraps ErrNoCgroup and says what to
// give.
func CgroupDir(name string) (string, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil && !isCgroupDir(name) {
		return "", fmt.Errorf("--cgroup %s: %w: %w", name, ErrUnsupported, err)
	}
	return cgroupDir(name, string(b))
}

// cgroupDir resolves a cgroup given as a directory of a cgroup v2 file
// system, or as a path inside the hierarchy (/system.slice/x.service, as
// /proc/PID/cgroup and systemctl show it) under the cgroup v2 mount
// named by mountinfo, the text of /proc/self/mountinfo.
func cgroupDir(name, mountinfo string) (string, error) {
	if isCgroupDir(name) {
		return filepath.Abs(name)
	}
	mount := cgroup2Mount(mountinfo)
	if mount == "" {
		return "", fmt.Errorf("--cgroup %s: %w: no cgroup v2 file system is mounted (see /proc/self/mountinfo)", name, ErrNoCgroup)
	}
	dir := filepath.Join(mount, filepath.Clean("/"+name))
	if !isCgroupDir(dir) {
		return "", fmt.Errorf("--cgroup %s: %w under the cgroup v2 mount %s: give a path like /system.slice/NAME.service (systemctl status shows a unit's), or the cgroup's directory", name, ErrNoCgroup, mount)
	}
	return dir, nil
}

// isCgroupDir reports whether dir is a cgroup's directory: it has a
// cgroup.procs file.
func isCgroupDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "cgroup.procs"))
	return err == nil && st.Mode().IsRegular()
}

// cgroup2Mount returns the mount point of the first cgroup2 file system
// in a /proc/PID/mountinfo text ("" if none). The fields after " - " are
// the file system type and source (proc(5), /proc/PID/mountinfo); the
// mount point, field 5, escapes a space as \040.
func cgroup2Mount(mountinfo string) string {
	for _, l := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(l, " - ")
		if !ok {
			continue
		}
		f, p := strings.Fields(pre), strings.Fields(post)
		if len(f) >= 5 && len(p) >= 1 && p[0] == "cgroup2" {
			return strings.ReplaceAll(f[4], `\040`, " ")
		}
	}
	return ""
}
