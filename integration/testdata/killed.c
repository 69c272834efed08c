// killed runs a hot loop calling a few functions and prints "beat K" after
// every round of calls; between rounds it polls its stdin and exits 0 at
// its end. It prints "ready PID" first. A tracer killed while it runs
// leaves it running on whatever is in its code then.
//
// Usage: killed [CALLS_PER_ROUND].
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long acc;

__attribute__((noinline)) static long square(long x) { return x * x; }

__attribute__((noinline)) static long pick(long x) {
	if (x % 3 == 0) // PICK_BRANCH
		return square(x);
	return x + 1;
}

__attribute__((noinline)) static void work(long i) {
	acc += pick(i) & 0xff;
}

int main(int argc, char **argv) {
	long per = argc > 1 ? atol(argv[1]) : 200000;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (long k = 1;; k++) {
		for (long i = 0; i < per; i++)
			work(i);
		printf("beat %ld\n", k);
		fflush(stdout);
		struct pollfd p = {.fd = 0, .events = POLLIN};
		if (poll(&p, 1, 0) > 0) {
			char c;
			if (read(0, &c, 1) <= 0)
				break; // end of input
		}
	}
	printf("acc %ld\n", acc);
	return 0;
}
