/* The sampled call chains' target (timestacks_test.go): main calls middle,
 * which calls work twice; work is where the time goes, a leaf that moves
 * no stack pointer (the compiler gives it no frame even with frame
 * pointers kept), so the frame-pointer chain alone would skip middle.
 * Built with -O1 -fno-omit-frame-pointer -fno-asynchronous-unwind-tables:
 * without call frame information, the kernel's chain serves it. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noipa)) long work(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += i ^ (s >> 3);
	return s;
}

__attribute__((noipa)) long middle(long n) { return work(n) + work(n / 2); }

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000, s = 0;
	for (int i = 0; i < 15; i++)
		s += middle(n);
	printf("stacks %ld\n", s);
	return 0;
}
