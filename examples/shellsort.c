/* Bishop's example: fill an array with 1000 numbers and Shell sort it
 * (Kernighan and Ritchie's shell sort). Build with -g, then:
 *   patchprof --lines --funcs ./shellsort
 */
#include <stdio.h>

#define MAX 1000

static unsigned long seed = 12345;

static int next(void)
{
	seed = seed * 1103515245 + 12345;
	return (int)((seed / 65536) % 32768);
}

static void shell(int v[], int n)
{
	int gap, i, j, temp;

	for (gap = n / 2; gap > 0; gap /= 2)
		for (i = gap; i < n; i++)
			for (j = i - gap; j >= 0 && v[j] > v[j + gap]; j -= gap) {
				temp = v[j];
				v[j] = v[j + gap];
				v[j + gap] = temp;
			}
}

int main(void)
{
	int list[MAX];
	long sum = 0;
	int i;

	for (i = 0; i < MAX; i++)
		list[i] = next();
	shell(list, MAX);
	for (i = 1; i < MAX; i++)
		if (list[i - 1] > list[i])
			return 1;
	for (i = 0; i < MAX; i += 100)
		sum += list[i];
	printf("sorted %d numbers, checksum %ld\n", MAX, sum);
	return 0;
}
