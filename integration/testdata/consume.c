/* The second program of a pipeline: reads numbers, calling take for each,
 * and prints their count and sum. */
#include <stdio.h>

static long total;

static void take(long v)
{
	total += v; /* TAKE_BODY */
}

int main(void)
{
	long v, n = 0;
	while (scanf("%ld", &v) == 1) {
		take(v);
		n++;
	}
	printf("count %ld sum %ld\n", n, total);
	return 0;
}
