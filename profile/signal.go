package profile

import (
	"strconv"
	"strings"
)

// signalNames is the Linux x86-64 signal table, index = signal number
// (signal(7), "Standard signals"; asm/signal.h for x86).
var signalNames = [...]string{
	1:  "SIGHUP",
	2:  "SIGINT",
	3:  "SIGQUIT",
	4:  "SIGILL",
	5:  "SIGTRAP",
	6:  "SIGABRT",
	7:  "SIGBUS",
	8:  "SIGFPE",
	9:  "SIGKILL",
	10: "SIGUSR1",
	11: "SIGSEGV",
	12: "SIGUSR2",
	13: "SIGPIPE",
	14: "SIGALRM",
	15: "SIGTERM",
	16: "SIGSTKFLT",
	17: "SIGCHLD",
	18: "SIGCONT",
	19: "SIGSTOP",
	20: "SIGTSTP",
	21: "SIGTTIN",
	22: "SIGTTOU",
	23: "SIGURG",
	24: "SIGXCPU",
	25: "SIGXFSZ",
	26: "SIGVTALRM",
	27: "SIGPROF",
	28: "SIGWINCH",
	29: "SIGIO",
	30: "SIGPWR",
	31: "SIGSYS",
}

// signalAliases are other names signal(7) gives to the same numbers.
var signalAliases = map[string]int{
	"SIGIOT":  6,
	"SIGPOLL": 29,
	"SIGCLD":  17,
}

// maxSignal is the highest Linux signal number (_NSIG-1 = SIGRTMAX).
const maxSignal = 64

// SignalName returns the Linux x86-64 name of signal n ("SIGSEGV" for 11).
// Signals without a standard name (the real-time signals 32..64) are named
// "signal N", the way Go's syscall.Signal prints them.
func SignalName(n int) string {
	if n > 0 && n < len(signalNames) {
		return signalNames[n]
	}
	return "signal " + strconv.Itoa(n)
}

// SignalNumber returns the Linux x86-64 number of the signal named name. It
// knows the standard names of signal(7), their aliases (SIGIOT, SIGPOLL,
// SIGCLD) and the form "signal N" that SignalName gives for 1 <= N <= 64.
func SignalNumber(name string) (int, bool) {
	for n, s := range signalNames {
		if s != "" && s == name {
			return n, true
		}
	}
	if n, ok := signalAliases[name]; ok {
		return n, true
	}
	if d, ok := strings.CutPrefix(name, "signal "); ok {
		n, err := strconv.Atoi(d)
		if err == nil && n >= 1 && n <= maxSignal && strconv.Itoa(n) == d {
			return n, true
		}
	}
	return 0, false
}
