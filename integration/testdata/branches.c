/*
 * branches.c: conditional branches of several shapes, for comparing
 * patchprof --blocks with gcov -b (gcc --coverage) at -O0 and -O2. Every
 * condition tests the result of a call that is not inlined, so that gcc
 * keeps each one a branch of its own at -O2 (no conditional move, no two
 * comparisons folded into one range check), and the loop is a do-while,
 * whose one test -O2 does not rotate or duplicate: each line's branches are
 * then the same in gcov's instrumented build and in the plain one.
 */
#include <stdio.h>
#include <stdlib.h>

static unsigned int seed = 1;

__attribute__((noinline)) int
rnd(void)
{
	seed = seed * 1103515245u + 12345u;
	return (int)((seed >> 16) & 0x7fff);
}

static long total;

__attribute__((noinline)) void
sink(int x)
{
	total += x;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) int
above(int x, int limit)
{
	return x > limit;
}

__attribute__((noinline)) int
classify(int x)
{
	if (x % 3 == 0) /* BR_IF */
		sink(1);
	else
		sink(2);
	if (above(x, 100) && !above(x, 20000)) /* BR_AND */
		sink(3);
	if (!above(x, 50) || above(x, 30000)) /* BR_OR */
		sink(4);
	sink(0); /* a join: nothing for -O2 to duplicate the next test into */
	if (above(x, 40000)) /* BR_NEVER */
		sink(5);
	return x & 1;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000;
	int odd = 0;
	int i = 0;

	do
		odd += classify(rnd());
	while (++i < n); /* BR_LOOP */
	printf("%d odd, total %ld\n", odd, total);
	return 0;
}
