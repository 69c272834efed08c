/*
 * signals.c: signals arriving while patchprof counts. argv[1] picks the case:
 *   timer     a 1 ms ITIMER_REAL fires SIGALRM into handler while hot runs
 *             50000 times; prints "hot N handler M" with its own counts.
 *   trap      raise(SIGTRAP) with a SIGTRAP handler installed.
 *   int3      an int3 of the program's own, with a SIGTRAP handler installed.
 *   trapdie   raise(SIGTRAP) with no handler: the program dies of SIGTRAP.
 *   stop      calls f 100 times, raise(SIGSTOP), then calls f 100 times more;
 *             the test sends SIGCONT; prints how long it was stopped.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define HOTCALLS 50000

static volatile sig_atomic_t handled;
static volatile sig_atomic_t trapped;
static volatile long sink;

__attribute__((noipa)) void
handler(int sig)
{
	(void)sig;
	handled++; /* HANDLER_BODY */
}

__attribute__((noipa)) void
traphandler(int sig)
{
	(void)sig;
	trapped++;
}

__attribute__((noipa)) long
hot(long x)
{
	return x * 7 + 3; /* HOT_BODY */
}

__attribute__((noipa)) void
f(void)
{
	sink++; /* F_BODY */
}

static int
timer(void)
{
	struct sigaction sa;
	struct itimerval it;
	long i, calls = 0;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof it);
	it.it_interval.tv_usec = 1000;
	it.it_value.tv_usec = 1000;
	setitimer(ITIMER_REAL, &it, NULL);
	/* At least HOTCALLS calls, and on until 3 signals came: counting in
	 * the target, 50000 calls take less than a timer period. */
	for (i = 0; i < HOTCALLS || handled < 3; i++) {
		sink += hot(i);
		calls++;
	}
	memset(&it, 0, sizeof it);
	setitimer(ITIMER_REAL, &it, NULL);
	printf("hot %ld handler %d\n", calls, (int)handled);
	return 0;
}

static void
catchtrap(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = traphandler;
	sigaction(SIGTRAP, &sa, NULL);
}

int
main(int argc, char **argv)
{
	struct timespec t0, t1;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: signals timer|trap|int3|trapdie|stop\n");
		return 2;
	}
	if (strcmp(argv[1], "timer") == 0)
		return timer();
	if (strcmp(argv[1], "trap") == 0) {
		catchtrap();
		raise(SIGTRAP);
		if (trapped == 1)
			printf("caught SIGTRAP\n");
		return trapped == 1 ? 0 : 1;
	}
	if (strcmp(argv[1], "int3") == 0) {
		catchtrap();
		__asm__ volatile("int3");
		if (trapped == 1)
			printf("caught SIGTRAP\n");
		return trapped == 1 ? 0 : 1;
	}
	if (strcmp(argv[1], "trapdie") == 0) {
		raise(SIGTRAP);
		printf("survived SIGTRAP\n");
		return 0;
	}
	if (strcmp(argv[1], "stop") == 0) {
		for (i = 0; i < 100; i++)
			f();
		printf("stopping\n");
		fflush(stdout);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		raise(SIGSTOP);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("stopped %ld ms\n", (long)((t1.tv_sec - t0.tv_sec) * 1000 +
		    (t1.tv_nsec - t0.tv_nsec) / 1000000));
		for (i = 0; i < 100; i++)
			f();
		printf("continued\n");
		return 0;
	}
	fprintf(stderr, "signals: unknown case %s\n", argv[1]);
	return 2;
}
