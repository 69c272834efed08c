/*
 * shellsort.c: Bishop's example (examples/shellsort.c) with the size as
 * argv[1] (default 20000): fill an array from a fixed linear congruential
 * generator, sort it with the Shell sort of Kernighan and Ritchie, print a
 * checksum. The line-heavy benchmark of bench/ (issue 13).
 */
#include <stdio.h>
#include <stdlib.h>

static unsigned int seed = 12345;

int
next(void)
{
	seed = seed * 1103515245u + 12345u;
	return (int)((seed >> 16) & 0x7fff);
}

void
fill(int a[], int n)
{
	int i;

	for (i = 0; i < n; i++)
		a[i] = next();
}

/* shell: sort v[0]...v[n-1] into increasing order (K&R, 1st edition, p. 58) */
void
shell(int a[], int n)
{
	int gap, i, j, temp;

	for (gap = n / 2; gap > 0; gap /= 2)
		for (i = gap; i < n; i++)
			for (j = i - gap; j >= 0 && a[j] > a[j + gap]; j -= gap) {
				temp = a[j];
				a[j] = a[j + gap];
				a[j + gap] = temp;
			}
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	unsigned long sum = 0;
	int *v, i;

	if (n < 1 || (v = malloc((size_t)n * sizeof *v)) == NULL) {
		fprintf(stderr, "usage: shellsort [N >= 1]\n");
		return 2;
	}
	fill(v, n);
	shell(v, n);
	for (i = 0; i < n; i++) {
		if (i > 0 && v[i - 1] > v[i]) {
			printf("not sorted at %d\n", i);
			return 1;
		}
		sum = sum * 31 + (unsigned long)v[i];
	}
	printf("checksum %lu\n", sum);
	free(v);
	return 0;
}
