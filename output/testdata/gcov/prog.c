/* prog.c: the C program TestWriteGcovMatchesGcov builds with
 * gcc --coverage -O0, runs, and compares WriteGcov with gcov -t -b on. */
#include <stdio.h>
#include <stdlib.h>

static int square(int x)
{
	return x * x;
}

static int never(int y)
{
	return y - 1;
}

int collatz(long n)
{
	int steps = 0;

	while (n != 1) {
		if (n % 2 == 0)
			n /= 2;
		else
			n = 3 * n + 1;
		steps++;
	}
	return steps;
}

int main(int argc, char **argv)
{
	int sum = 0;

	for (int i = 0; i < 10; i++)
		sum += square(i);
	if (argc > 5)
		sum = never(sum);
	sum += collatz(27);
	printf("%d\n", sum);
	return 0;
}
