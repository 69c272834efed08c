/* The call chains walked by call frame information (timestacks_test.go):
 * main calls outer, outer calls middle, middle calls work; built with
 * -O2, whose code keeps no frame pointers. Each function moves its stack
 * pointer (a local array the compiler must keep in memory), so neither
 * the kernel's frame-pointer chain nor the word at the stack pointer
 * tells any caller of work: only the CFI does. With a second argument,
 * main calls sorter, which sorts through the C library's qsort, whose
 * frames keep no frame pointer either, with a comparator that spins:
 * only the C library's own CFI leads from cmp back to sorter. With
 * "pointer" as the second argument, main calls looper, which calls tiny
 * through a pointer: under the jump engine with --calls most of tiny's
 * time is its entry check, whose pushes its CFI does not describe. With
 * "library", main calls roller, which calls the C library's random_r in
 * a loop: the samples in random_r, a file that is not counted, keep their
 * chain through roller. */
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>

__attribute__((noipa)) long work(long n)
{
	volatile long pad[4] = {n, 1, 2, 3};
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i ^ (s >> 3) ^ pad[i & 3];
	return s;
}

__attribute__((noipa)) long middle(long n)
{
	volatile long pad[8] = {0};
	pad[n & 7] = n;
	return work(n) + work(n / 2) + pad[3];
}

__attribute__((noipa)) long outer(long n)
{
	volatile long pad[16] = {0};
	pad[n & 15] = n;
	return middle(n) + pad[5];
}

static long spins;

__attribute__((noipa)) int cmp(const void *a, const void *b)
{
	volatile long pad[4] = {0};
	for (long i = 0; i < spins; i++)
		pad[i & 3] += i;
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

__attribute__((noipa)) long sorter(long n)
{
	long v[200];
	for (long i = 0; i < 200; i++)
		v[i] = (i * 7919) % 200;
	spins = n;
	qsort(v, 200, sizeof v[0], cmp);
	return v[0] + v[199];
}

__attribute__((noipa)) long tiny(long x)
{
	return x + 1;
}

long (*volatile tinyp)(long) = tiny;

__attribute__((noipa)) long looper(long n)
{
	volatile long pad[4] = {0};
	long s = 0;
	for (long i = 0; i < n; i++)
		s += tinyp(i);
	return s + pad[1];
}

__attribute__((noipa)) long roller(long n)
{
	static char state[256];
	struct random_data rd = {0};
	int32_t r;
	long s = 0;
	initstate_r(1, state, sizeof state, &rd);
	for (long i = 0; i < n; i++) {
		random_r(&rd, &r);
		s += r & 1;
	}
	return s;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000, s = 0;
	if (argc > 2 && argv[2][0] == 'l') {
		printf("cfistacks library %ld\n", roller(n));
		return 0;
	}
	if (argc > 2 && argv[2][0] == 'p') {
		printf("cfistacks pointer %ld\n", looper(n));
		return 0;
	}
	if (argc > 2) {
		printf("cfistacks sorted %ld\n", sorter(n / 100));
		return 0;
	}
	for (int i = 0; i < 10; i++)
		s += outer(n);
	printf("cfistacks %ld\n", s);
	return 0;
}
