/*
 * flagslive.c: hot sites where the arithmetic flags are live, which the
 * in-process engine counts with an update that keeps them.
 *
 *   - below: inline assembly whose blocks start where the flags of the
 *     cmp before them are still to be read: live in fact, and the
 *     program checks every answer;
 *   - rot: a variable rotate, which leaves the flags alone when the
 *     count is 0, so that its entry's flags are not known dead;
 *   - shifted: variable shifts as zlib's deflate does them.
 *
 * flagslive N runs the loop N times and prints the counts; flagslive N
 * signals has a timer signal arrive every 200 microseconds meanwhile,
 * threads inside the update among others, and its handler calls rot too.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static volatile unsigned long sink;
static volatile long handled;

/*
 * 7 when a == b, 3 when a < b, 5 when a > b. Every block of the assembly
 * after the first reads the carry of its cmp (a jb, a cmov) before
 * anything writes the flags: they cannot all have their counts derived
 * from the others', so some count in the target, flags live.
 */
__attribute__((noipa)) long
below(unsigned long a, unsigned long b)
{
	long r;
	__asm__ volatile("cmp %2, %1\n\tjne 1f\n\tmov $7, %0\n\tcmovb %1, %0\n\tjmp 3f\n1:\tmov %1, %0\n\tlea 1(%0), %0\n\tjb 2f\n\tmov $5, %0\n\tcmovb %1, %0\n\tjmp 3f\n2:\tmov $3, %0\n\tcmovae %1, %0\n3:" : "=&r"(r) : "r"(a), "r"(b) : "cc"); /* BELOW_ASM */
	return r;
}

__attribute__((noipa)) unsigned
rot(unsigned x, unsigned n)
{
	return (x << n) | (x >> (32 - n)); /* ROT_BODY */
}

__attribute__((noipa)) unsigned
shifted(unsigned x, unsigned s)
{
	unsigned h = x << s;
	if (h) /* SHIFT_IF */
		h ^= x >> s;
	return h;
}

static void
on_alarm(int sig)
{
	(void)sig;
	handled++;
	sink += rot((unsigned)handled, 7);
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i, bad = 0;
	struct itimerval it = {{0, 200}, {0, 200}};

	if (argc > 2 && strcmp(argv[2], "signals") == 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_alarm;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGALRM, &sa, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
	}
	for (i = 0; i < n; i++) {
		unsigned long a = (unsigned long)i % 7, b = (unsigned long)i % 5;
		long want = a == b ? 7 : a < b ? 3 : 5;

		if (below(a, b) != want) /* LOOP_CHECK */
			bad++;
		sink += rot((unsigned)i, (unsigned)i % 31 + 1);
		sink += shifted((unsigned)i, (unsigned)i & 7);
	}
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	printf("n %ld handled %ld bad %ld\n", n, handled, bad);
	return bad != 0;
}
