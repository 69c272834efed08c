/* A static program for what the function table shows: work is called 100
 * times, main once, never not at all; the C library linked in brings a
 * thousand functions without source lines, most of which never run.
 * Build with -static -g. */
#include <stdio.h>
#include <stdlib.h>

static int never(int x)
{
	return x * 3;
}

static int work(int x)
{
	return x + abs(x - 50);
}

int main(int argc, char **argv)
{
	int sum = 0;
	int i;

	for (i = 0; i < 100; i++)
		sum += work(i);
	if (argc > 5)
		sum += never(argc);
	printf("sum %d %s\n", sum, argv[0] ? "argv" : "none");
	return 0;
}
