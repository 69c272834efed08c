/* Shares patchprof's terminal: computes for a while without printing, then
 * prints lines to stdout and stderr a little apart (by printf, write and
 * writev), computes again, leaves a prompt unfinished while it computes, and
 * ends the line. The bytes it prints are the test's oracle. */
#include <stdio.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) void step(long i)
{
	sink += i; /* STEP_BODY */
}

/* busy calls step() for ms milliseconds. */
static void busy(long ms)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (long i = 0; i < 1000; i++)
			step(i);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

int main(void)
{
	busy(1800);
	for (int i = 1; i <= 8; i++) {
		if (i % 3 == 0) {
			char head[32];
			int n = snprintf(head, sizeof head, "line %d", i);
			struct iovec iov[3] = {{head, n}, {" via writev\n", 12}, {"", 0}};
			writev(1, iov, 3);
		} else if (i % 3 == 1) {
			printf("line %d on stdout\n", i);
			fflush(stdout);
		} else {
			dprintf(2, "line %d on stderr\n", i);
		}
		usleep(150000);
	}
	busy(1800);
	printf("prompt> ");
	fflush(stdout);
	busy(1800);
	printf("done\n");
	return 0;
}
