/* Indirect calls interrupted by signals (callkinds_test.go): main calls
 * inc through a pointer N times while a timer's handler, run between any
 * two instructions of it, calls tick through another pointer. Each call
 * is counted from its own site exactly: a handler's calls must not take
 * the place of the call it interrupted, nor a thread stopped inside an
 * entry's check count one twice. It prints inc's sum and the handler's
 * runs. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

static volatile long runs;

__attribute__((noipa)) long inc(long x) { return x + 1; }
__attribute__((noipa)) void tick(void) { runs++; }

long (*volatile fp)(long) = inc;
void (*volatile tp)(void) = tick;

static void on_alarm(int sig)
{
	(void)sig;
	tp(); /* site:handler */
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	long s = 0;
	struct sigaction sa = {0};
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, 0);
	struct itimerval it = {{0, 1000}, {0, 1000}};
	setitimer(ITIMER_REAL, &it, 0);
	for (long i = 0; i < n; i++)
		s = fp(s); /* site:loop */
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, 0);
	printf("%ld %ld\n", s, runs);
	return 0;
}
