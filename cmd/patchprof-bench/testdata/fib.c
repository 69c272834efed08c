/*
 * fib.c: recursive Fibonacci, the call-heavy benchmark of bench/ (issue 13).
 * argv[1] is n (default 30); fib(30) makes 2,692,537 calls of fib.
 */
#include <stdio.h>
#include <stdlib.h>

long
fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 30;

	printf("fib(%d) = %ld\n", n, fib(n));
	return 0;
}
