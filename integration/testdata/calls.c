/*
 * calls.c: known call counts. work is called exactly 1000 times, never is
 * not called, fib(15) makes 1973 calls of fib, main runs once.
 * noipa keeps the functions whole and under their own names at -O2 (no
 * inlining, cloning or IPA-SRA); no-optimize-sibling-calls keeps gcc from
 * turning fib's second recursive call into a loop, so every call is a call.
 */
#include <stdio.h>

__attribute__((noipa)) int
work(int x)
{
	int y = x * 3; /* WORK_BODY */
	return y + 1;
}

__attribute__((noipa)) int
never(void)
{
	return 42; /* NEVER_BODY */
}

__attribute__((noipa, optimize("no-optimize-sibling-calls"))) int
fib(int n)
{
	if (n < 2) /* FIB_TEST */
		return n;
	return fib(n - 1) + fib(n - 2);
}

int
main(int argc, char **argv)
{
	long sum = 0;
	int i;

	(void)argv;
	for (i = 0; i < 1000; i++)
		sum += work(i); /* MAIN_CALL_WORK */
	if (argc > 5)
		sum += never();
	printf("sum %ld fib %d\n", sum, fib(15));
	return 0;
}
