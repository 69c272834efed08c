package main

import "golang.org/x/sys/unix"

// isTerminal reports whether fd is a terminal: TCGETS succeeds only on one
// (tcgetattr(3)).
func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
	return err == nil
}

// terminalWidth returns the width in columns of the terminal on fd, 0 when
// it is unknown (tty_ioctl(4), TIOCGWINSZ).
func terminalWidth(fd uintptr) int {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
