/*
 * shellsort.c: the example of Bishop, "Profiling under UNIX by Patching"
 * (1987): fill an array from a fixed linear congruential generator, sort it
 * with the shell sort of Kernighan and Ritchie, print a checksum.
 * Markers in comments name lines whose counts the tests know by construction.
 */
#include <stdio.h>

#define N 1000

static int v[N];
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
		a[i] = next(); /* FILL_BODY */
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
main(void)
{
	unsigned long sum = 0;
	int i;

	fill(v, N);
	shell(v, N);
	for (i = 0; i < N; i++) {
		if (i > 0 && v[i - 1] > v[i]) {
			printf("not sorted at %d\n", i);
			return 1;
		}
		sum = sum * 31 + (unsigned long)v[i];
	}
	printf("checksum %lu\n", sum);
	return 0;
}
