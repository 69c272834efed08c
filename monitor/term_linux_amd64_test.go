//go:build linux && amd64

package monitor

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/patchprof/patchprof/breakpoint"
	"github.com/patchprof/patchprof/symtab"
	"golang.org/x/sys/unix"
)

// termC uses its terminal (stdin and stdout), a file (stderr) and a
// duplicate of the terminal, then moves stdout to the file.
const termC = `
#include <sys/uio.h>
#include <unistd.h>
int main(void)
{
	char in[8];
	struct iovec v[3] = {{"b", 1}, {"\n", 1}, {"", 0}};
	write(1, "a\n", 2);
	write(1, "prompt ", 7);
	writev(1, v, 3);
	write(2, "to the file\n", 12);
	read(0, in, sizeof in);
	int fd = dup(1);
	write(fd, "c", 1);
	dup2(2, 1);
	write(1, "d\n", 2);
	return 0;
}
`

// TestTerminalWrites: Options.Terminal hears of exactly the target's calls
// on the terminal, whatever the descriptor, with whether a write ends its
// line, and not of those on a file, even on a descriptor that was the
// terminal before a dup2.
func TestTerminalWrites(t *testing.T) {
	prog := buildC(t, termC)
	ptm, pts := openTestPTY(t)
	defer ptm.Close()
	defer pts.Close()
	if _, err := ptm.Write([]byte("in\n")); err != nil {
		t.Fatal(err)
	}
	file, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	sym, err := symtab.Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	defer sym.Close()
	plan := breakpoint.NewPlan(sym, nil, breakpoint.PlanOptions{Funcs: true, FuncFilter: func(s string) bool { return s == "main" }})
	var got []string
	res, err := Run(Options{
		Path: prog, Args: []string{prog}, Table: plan.Table, Entry: sym.Entry,
		Stdin: pts, Stdout: pts, Stderr: file,
		Terminal: &Terminal{
			File:  pts,
			Enter: func(lineDone bool) { got = append(got, "enter "+strconv.FormatBool(lineDone)) },
			Leave: func() { got = append(got, "leave") },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Exit.Code != 0 {
		t.Fatalf("exit %+v", res.Exit)
	}
	want := strings.Fields("enter_true leave enter_false leave enter_true leave enter_true leave enter_false leave")
	for k := range want {
		want[k] = strings.ReplaceAll(want[k], "_", " ")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("terminal calls %q, want %q", got, want)
	}
	b, err := os.ReadFile(file.Name())
	if err != nil || string(b) != "to the file\nd\n" {
		t.Errorf("the file holds %q (%v)", b, err)
	}
}

// openTestPTY opens a pseudo-terminal pair (pty(7)) with echo off.
func openTestPTY(t *testing.T) (ptm, pts *os.File) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	ptm = os.NewFile(uintptr(fd), "/dev/ptmx")
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0)
	}
	if err == nil {
		pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
	}
	if err == nil {
		var tio *unix.Termios
		if tio, err = unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS); err == nil {
			tio.Lflag &^= unix.ECHO
			err = unix.IoctlSetTermios(int(pts.Fd()), unix.TCSETS, tio)
		}
	}
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	return ptm, pts
}
