/*
 * jumpsig.c: a timer signal every millisecond while the main loop calls f as
 * fast as it can: signals arrive while threads are inside trampolines. The
 * handler calls g and counts its own calls; the program prints both
 * counts, which patchprof's must equal.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile long sink;
static volatile long handled;

__attribute__((noipa)) long
f(long x)
{
	return x ^ 0x55;
}

__attribute__((noipa)) void
g(void)
{
	handled++;
}

static void
on_alarm(int sig)
{
	(void)sig;
	g();
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000, i;
	struct sigaction sa;
	struct itimerval it = {{0, 1000}, {0, 1000}};

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < n; i++)
		sink += f(i);
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	printf("f %ld g %ld\n", n, handled);
	return 0;
}
