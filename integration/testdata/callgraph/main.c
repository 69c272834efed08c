/* The call graph test's target (callgraph_test.go): every arc's count is
 * known by construction, and the lines marked "site:NAME" are the call
 * sites the test looks up. noipa keeps each function called as written
 * (no inlining, cloning or interprocedural shortcuts) at -O2 too. */
#include <stdio.h>
#include <stdlib.h>

int lib_twice(int x); /* in libcg.so: calls lib_helper twice */

static int cmp_calls; /* the comparator's own count of its calls */

__attribute__((noipa)) int leaf(int x) { return x + 1; }

__attribute__((noipa)) int rec(int n)
{
	if (n == 0)
		return 0;
	return 1 + rec(n - 1); /* site:rec */
}

__attribute__((noipa)) int viaptr(int x) { return x * 2; }

/* At -O2 its call is a jmp: a tail call. */
__attribute__((noipa)) int tailer(int x) { return leaf(x * 3); /* site:tail */ }

__attribute__((noipa)) static int cmp(const void *a, const void *b)
{
	cmp_calls++;
	return *(const int *)a - *(const int *)b;
}

int (*volatile fp)(int) = viaptr;
/* A call through a pointer into the C library, which calls back into the
 * program deeper on the stack: cmp's caller is not the pointer's site. */
void (*volatile sorter)(void *, size_t, size_t, int (*)(const void *, const void *)) = qsort;

int main(void)
{
	int s = 0, v[6] = {5, 3, 9, 1, 7, 2};
	for (int i = 0; i < 3; i++)
		s += leaf(i); /* site:leaf3 */
	for (int i = 0; i < 5; i++)
		s += leaf(i); /* site:leaf5 */
	for (int i = 0; i < 7; i++)
		s += fp(i); /* site:ptr */
	s += rec(9); /* site:rec1 */
	for (int i = 0; i < 4; i++)
		s += lib_twice(i); /* site:lib */
	for (int i = 0; i < 2; i++)
		s += tailer(i); /* site:tailer */
	qsort(v, 6, sizeof v[0], cmp); /* site:qsort */
	sorter(v, 6, sizeof v[0], cmp); /* site:sorter */
	puts("callgraph"); /* site:puts */
	printf("sum %d cmp %d\n", s, cmp_calls);
	return 0;
}
