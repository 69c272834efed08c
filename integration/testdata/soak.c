/* Calls tick() as fast as it can for argv[1] seconds, then prints how many
 * calls it made. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long ticks;

__attribute__((noinline)) void tick(void)
{
	ticks++;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		for (int i = 0; i < 100; i++)
			tick();
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
			break;
	}
	printf("ticks %lu\n", ticks);
	return 0;
}
