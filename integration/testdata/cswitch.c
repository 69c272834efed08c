/*
 * cswitch.c: a dense switch that gcc compiles to a jump table at -O0 and
 * -O2 (i is unsigned, so i % 10 needs no range check): each of the ten
 * cases runs exactly 100 times. noipa keeps dispatch a function of its own.
 */
#include <stdio.h>

static long total;

__attribute__((noipa)) void
sink(int x)
{
	total += x;
}

__attribute__((noipa)) void
dispatch(unsigned int i)
{
	switch (i % 10) {
	case 0: sink(3); break;
	case 1: sink(5); break;
	case 2: sink(7); break;
	case 3: sink(11); break;
	case 4: sink(13); break;
	case 5: sink(17); break;
	case 6: sink(19); break;
	case 7: sink(23); break;
	case 8: sink(29); break;
	case 9: sink(31); break;
	}
}

int
main(void)
{
	unsigned int i;

	for (i = 0; i < 1000; i++)
		dispatch(i);
	printf("total %ld\n", total);
	return 0;
}
