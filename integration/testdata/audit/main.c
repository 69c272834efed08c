/*
 * main.c: says whether SIGTRAP is blocked in the main thread, as the
 * LD_AUDIT library audit.c left it, after calling f 10 times.
 */
#include <signal.h>
#include <stdio.h>

int n;

void
f(void)
{
	n++;
}

int
main(void)
{
	sigset_t s;

	for (int i = 0; i < 10; i++)
		f();
	sigprocmask(SIG_BLOCK, 0, &s);
	printf("calls %d, SIGTRAP %s\n", n, sigismember(&s, SIGTRAP) ? "blocked" : "unblocked");
	return 0;
}
