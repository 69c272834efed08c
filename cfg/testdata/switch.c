/* A dense switch (a jump table at -O0 and -O2), loops, if/else and calls
 * that do not return, for cfg's gcc tests (realbin_test.go). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void act(int x)
{
	switch (x) {
	case 1: puts("one"); break;
	case 2: puts("two"); break;
	case 3: puts("three"); break;
	case 4: puts("four"); break;
	case 5: puts("five"); break;
	case 6: puts("six"); break;
	case 7: puts("seven"); break;
	default: puts("other");
	}
}

__attribute__((noinline)) int sum(const int *v, int n)
{
	int s = 0;
	for (int i = 0; i < n; i++) {
		if (v[i] > 0)
			s += v[i];
		else
			s -= 1;
	}
	return s;
}

__attribute__((noinline)) void check(int x)
{
	if (x > 100) {
		fprintf(stderr, "too big\n");
		exit(2);
	}
	if (x < -100)
		abort();
}

int main(int argc, char **argv)
{
	int v[10];
	for (int i = 0; i < 10; i++)
		v[i] = i - 3;
	for (int i = 0; i < 9; i++)
		act(i);
	check(argc);
	printf("%d\n", sum(v, 10));
	return 0;
}
