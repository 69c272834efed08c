package watch

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

func TestCgroup2Mount(t *testing.T) {
	hybrid := "25 30 0:22 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n" +
		"26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid,relatime shared:9 - cgroup2 cgroup2 rw\n" +
		"27 25 0:24 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
	if got := cgroup2Mount(hybrid); got != "/sys/fs/cgroup/unified" {
		t.Errorf("hybrid: %q, want /sys/fs/cgroup/unified", got)
	}
	if got := cgroup2Mount("1 0 0:1 / /a\\040b rw - cgroup2 none rw\n"); got != "/a b" {
		t.Errorf("escaped space: %q", got)
	}
	if got := cgroup2Mount("27 25 0:24 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\nbroken line\n"); got != "" {
		t.Errorf("v1 only: %q, want none", got)
	}
}

// TestCgroupDir resolves a cgroup by its directory and by its path under
// the mount, and says what to give otherwise.
func TestCgroupDir(t *testing.T) {
	mount := t.TempDir()
	unit := filepath.Join(mount, "system.slice", "api.service")
	os.MkdirAll(unit, 0o755)
	os.WriteFile(filepath.Join(unit, "cgroup.procs"), nil, 0o644)
	info := "26 25 0:23 / " + mount + " rw - cgroup2 cgroup2 rw\n"
	for _, name := range []string{"/system.slice/api.service", "system.slice/api.service", unit} {
		if got, err := cgroupDir(name, info); err != nil || got != unit {
			t.Errorf("cgroupDir(%q) = %q, %v; want %q", name, got, err, unit)
		}
	}
	if _, err := cgroupDir("/system.slice/none.service", info); !errors.Is(err, ErrNoCgroup) {
		t.Errorf("a missing cgroup: %v, want ErrNoCgroup", err)
	}
	if _, err := cgroupDir("/x", ""); !errors.Is(err, ErrNoCgroup) {
		t.Errorf("no cgroup2 mount: %v, want ErrNoCgroup", err)
	}
}

// TestCgroupSelect reads the PIDs of a subtree (a fake one: files named
// as the kernel's), and leaves out the watch itself.
func TestCgroupSelect(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skipf("no /proc here (%v): the PIDs are checked there", err)
	}
	root := t.TempDir()
	sub := filepath.Join(root, "worker")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(root, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	os.WriteFile(filepath.Join(sub, "cgroup.procs"), []byte(strconv.Itoa(os.Getppid())+"\n"), 0o644)
	c := &Cgroup{Dir: root, Name: "/t"}
	got, err := c.Select()
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, p := range got {
		pids = append(pids, p.PID)
	}
	if !slices.Equal(pids, []int{os.Getppid()}) {
		t.Errorf("Select = %v, want the parent %d only (not the watch itself)", pids, os.Getppid())
	}
	os.WriteFile(filepath.Join(sub, "cgroup.procs"), []byte("12 x\n"), 0o644)
	if _, err := (&Cgroup{Dir: root, Name: "/t"}).Select(); err == nil {
		t.Error("a cgroup.procs holding a word: no error")
	}
	if got, err := (&Cgroup{Dir: filepath.Join(root, "gone"), Name: "/gone"}).Select(); err != nil || len(got) != 0 {
		t.Errorf("a removed cgroup: %v, %v; want nothing, no error", got, err)
	}
}

// TestCgroupKeepsStarts reads a member's /proc/PID/stat only when it is
// new: a PID listed at two looks keeps the start time of the first, one
// that left the listing is read again when listed again.
func TestCgroupKeepsStarts(t *testing.T) {
	parent := os.Getppid()
	real, err := startTime(parent)
	if err != nil {
		t.Skipf("no /proc here (%v): the PIDs are checked there", err)
	}
	root := t.TempDir()
	procs := filepath.Join(root, "cgroup.procs")
	os.WriteFile(procs, []byte(strconv.Itoa(parent)+"\n"), 0o644)
	// A start no process has: seen again only if kept, not read.
	c := &Cgroup{Dir: root, Name: "/t", known: map[int]member{parent: {start: real + 1}}}
	look := func() []Proc {
		t.Helper()
		got, err := c.Select()
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := look(); !slices.Equal(got, []Proc{{PID: parent, Start: real + 1}}) {
		t.Errorf("a member listed again: %v, want its kept start %d", got, real+1)
	}
	os.WriteFile(procs, nil, 0o644)
	if got := look(); len(got) != 0 {
		t.Errorf("an empty cgroup: %v, want nothing", got)
	}
	os.WriteFile(procs, []byte(strconv.Itoa(parent)+"\n"), 0o644)
	if got := look(); !slices.Equal(got, []Proc{{PID: parent, Start: real}}) {
		t.Errorf("a member listed after a look without it: %v, want its start read, %d", got, real)
	}
}
