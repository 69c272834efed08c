/* The loop of a target that an attach test starts with "stdin" and
 * watches (startTarget, checkRunsOn): beatUntilEOF prints "ready PID",
 * then calls round(300) over and over, printing "beat S TOTAL" every half
 * second (TOTAL: the rounds' arguments summed), until its standard input
 * ends, as heartbeat.c does. For C and C++ alike. */
#include <poll.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double beatsNow(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int beatUntilEOF(void (*round)(long))
{
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	long total = 0;
	for (int s = 1;; s++) {
		double end = beatsNow() + 0.5;
		int eof = 0;
		while (beatsNow() < end && !eof) {
			round(300);
			total += 300;
			struct pollfd p = {0, POLLIN, 0};
			char buf[256];
			eof = poll(&p, 1, 1) > 0 && read(0, buf, sizeof buf) <= 0;
		}
		printf("beat %d %ld\n", s, total);
		fflush(stdout);
		if (eof)
			return 0;
	}
}
