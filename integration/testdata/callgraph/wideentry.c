/*
 * wideentry.c: a function whose first block is long (at -O0, 34
 * instructions and 165 bytes up to its branch, loads and stores through a
 * large frame: displaced whole into its trampoline, beside the entry check
 * that finds the caller of an indirect call), called through a pointer 7
 * times from one site and 5 from another. noipa keeps the functions whole.
 */
#include <stdio.h>

struct rec {
	long f[8];
};

static long total;

__attribute__((noipa)) long
wide(struct rec *r, long k)
{
	char pad[256];
	long a = r->f[0], b = r->f[1], c = r->f[2], d = r->f[3];
	long e = r->f[4], g = r->f[5], h = r->f[6];

	pad[k & 255] = (char)a;
	if (k & 1)
		return a + b + c + d + pad[k & 255];
	return e + g + h;
}

long (*volatile widep)(struct rec *, long) = wide;

__attribute__((noipa)) void
seven(struct rec *r)
{
	for (long k = 0; k < 7; k++)
		total += widep(r, k); /* site:seven */
}

__attribute__((noipa)) void
five(struct rec *r)
{
	for (long k = 0; k < 5; k++)
		total += widep(r, k); /* site:five */
}

int
main(void)
{
	struct rec r = {{1, 2, 3, 4, 5, 6, 7, 8}};

	seven(&r);
	five(&r);
	printf("wideentry %ld\n", total);
	return 0;
}
