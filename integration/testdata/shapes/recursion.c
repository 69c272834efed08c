/* Deep linear recursion and fib, for the gcov oracle
 * (integration/gcovshapes_test.go). Build: gcc -g -O0 recursion.c
 * down's -O0 frame is 32 bytes: 50,000 of them fit the default 8 MB stack. */
#include <stdio.h>

static long down(long n)
{
	if (n == 0)
		return 0;
	return 1 + down(n - 1); /* DOWN_RECURSE */
}

static long fib(int n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

static int is_odd(int n);

static int is_even(int n)
{
	return n == 0 ? 1 : is_odd(n - 1);
}

static int is_odd(int n)
{
	return n == 0 ? 0 : is_even(n - 1);
}

int main(void)
{
	long d = down(50000);
	printf("depth %ld fib %ld even %d\n", d, fib(15), is_even(100));
	return 0;
}
