/* Statements spread over several lines, for the gcov oracle
 * (integration/gcovshapes_test.go). Build: gcc -g -O0 multiline.c */
#include <stdio.h>

static const char *f(int b)
{
	return b % 3 == 0 ? NULL : "x";
}

static int check(int a, int x, int b)
{
	if (a != x ||
	    f(b) != NULL)
		return 1;
	return 0;
}

static long combine(long a, long b, long c)
{
	return a * 3 +
	       b * 5 -
	       c;
}

static const char *kind(int i)
{
	switch (i % 5) {
	case 0:
		return "zero";
	case 1:
	case 2:
		i += 1;
		/* fall through */
	case 3:
		i += 2;
		break;
	default:
		return "four";
	}
	return i > 5 ? "big" : "small";
}

int main(void)
{
	int i, hits = 0;
	long s = 0;
	for (i = 0; i < 13; i++) {
		int m = i > 5
			? i
			: -i;
		hits += check(i % 2, 0, i);
		s += combine(i,
			     i + 1,
			     m);
		printf("%d %s\n",
		       i,
		       kind(i));
	}
	printf("hits %d sum %ld\n", hits, s);
	return 0;
}
