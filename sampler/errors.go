package sampler

import (
	"errors"
	"fmt"
)

// ErrUnavailable is wrapped by Open's error when the kernel refuses perf
// events to patchprof (perf_event_paranoid of 3, a container's seccomp
// policy, a kernel built without them) or the platform has none.
var ErrUnavailable = errors.New("perf events unavailable")

// An UnavailableError reports why Open could not sample: Err is the
// errno perf_event_open(2) returned, or errors.ErrUnsupported.
type UnavailableError struct {
	Err error
}

// Error implements error, saying what to do next.
func (e *UnavailableError) Error() string {
	if errors.Is(e.Err, errors.ErrUnsupported) {
		return "CPU time sampling needs Linux perf events: this platform has none"
	}
	return fmt.Sprintf("perf_event_open refused (%v): the kernel does not let patchprof sample CPU time here; "+
		"lower /proc/sys/kernel/perf_event_paranoid to 2 (sysctl kernel.perf_event_paranoid=2), "+
		"or allow perf_event_open in the container's seccomp profile", e.Err)
}

// Unwrap returns ErrUnavailable and the errno.
func (e *UnavailableError) Unwrap() []error { return []error{ErrUnavailable, e.Err} }

// RefuseEnv is a test hook, and nothing else: when this environment
// variable is set (to anything), Open fails with an *UnavailableError
// (EACCES) as a kernel at perf_event_paranoid 3 makes it, so that the
// integration tests can run the ptrace fallback of --time on a machine
// that allows perf events. patchprof never sets it.
const RefuseEnv = "PATCHPROF_TEST_REFUSE_PERF"
