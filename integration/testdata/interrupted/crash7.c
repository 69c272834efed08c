/* crash7.c: tracker issue 24, item 2. The line that crashes was shown as
 * never run under the jump engine: `patchprof --lines ./crash7 a b`. */
#include <stdio.h>
int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(int argc, char **argv)
{
	int n = argc > 1 ? 20 : 10;
	printf("fib(%d)=%d argc=%d\n", n, fib(n), argc);
	if (argc > 2) { int *p = 0; return *p; } /* CRASH_LINE */
	return 0;
}
