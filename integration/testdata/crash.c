/*
 * crash.c: the target dies; argv[1] says how.
 *   segv   a loop runs 10 times, then crash writes through a null pointer
 *   abort  abort()
 *   kill   kill(getpid(), SIGKILL)
 *   fpe    integer division by zero
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int *volatile nowhere;
static volatile int zero;
static volatile long sink;

__attribute__((noipa)) void
crash(void)
{
	*nowhere = 42; /* SEGV_LINE */
}

__attribute__((noipa)) int
divide(int a)
{
	return a / zero; /* FPE_LINE */
}

int
main(int argc, char **argv)
{
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: crash segv|abort|kill|fpe\n");
		return 2;
	}
	for (i = 0; i < 10; i++)
		sink += i; /* LOOP_BODY */
	if (strcmp(argv[1], "segv") == 0)
		crash();
	else if (strcmp(argv[1], "abort") == 0)
		abort();
	else if (strcmp(argv[1], "kill") == 0)
		kill(getpid(), SIGKILL);
	else if (strcmp(argv[1], "fpe") == 0)
		sink += divide(7);
	fprintf(stderr, "crash: still alive after %s\n", argv[1]);
	return 3;
}
