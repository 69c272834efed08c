/* Three threads call work() every 200 us; main prints a heartbeat with the
 * total number of calls twice a second, argv[1] times, then exits 0; with
 * argv[1] "stdin", until its standard input ends (after a last beat), so a
 * test decides when it ends. */
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile long calls[3];

__attribute__((noinline)) void work(int k)
{
	calls[k]++; /* WORK_BODY */
}

static void *run(void *a)
{
	int k = (int)(long)a;
	for (;;) {
		work(k);
		usleep(200);
	}
	return 0;
}

/* halfSecondOrEOF waits half a second, or less when input comes; it
 * returns 1 at the end of standard input, half a second after it, so the
 * last beat counts more calls than the one before. */
static int halfSecondOrEOF(void)
{
	struct pollfd p = {.fd = 0, .events = POLLIN};
	char buf[256];
	if (poll(&p, 1, 500) > 0 && read(0, buf, sizeof buf) <= 0) {
		usleep(500000);
		return 1;
	}
	return 0; /* the half second passed, or input or a signal came */
}

int main(int argc, char **argv)
{
	int untilEOF = argc > 1 && !strcmp(argv[1], "stdin");
	int beats = argc > 1 ? atoi(argv[1]) : 5;
	pthread_t t[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], 0, run, (void *)i);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (int s = 1; untilEOF || s <= beats; s++) {
		int end = 0;
		if (untilEOF)
			end = halfSecondOrEOF();
		else
			usleep(500000);
		printf("beat %d %ld\n", s, calls[0] + calls[1] + calls[2]);
		fflush(stdout);
		if (end)
			break;
	}
	return 0;
}
