/* oncommand.c's protocol with CPU-bound calls: each line "N" on stdin makes
 * the program call work() N times, each call a dependent floating-point
 * loop of about a millisecond and a half, so that its sampled CPU time is
 * its own; it answers "done N TOTAL" with its own count of calls so far,
 * and spends no CPU in work() until the next line. Exits 0 at end of
 * input. Build: gcc -g -O1 -o spincommand spincommand.c */
#include <stdio.h>
#include <stdlib.h>

static long total;
static volatile double sink;

__attribute__((noinline)) void work(void)
{
	double x = sink;
	for (long i = 0; i < 1000000; i++)
		x = x * 0.999999 + 0.000001;
	sink = x;
	total++;
}

int main(void)
{
	char line[64];
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof line, stdin)) {
		long n = atol(line);
		for (long i = 0; i < n; i++)
			work();
		printf("done %ld %ld\n", n, total);
		fflush(stdout);
	}
	return 0;
}
