/* Return sites too short for a jmp rel32 after a block of over 128
 * bytes, with no padding after the function (-O0 aligns none): SQLite's
 * pagerReleaseMapPage, `call; nop; leave; ret`, and allocateBtreePage,
 * `call; mov -4(%rbp),%eax` (return rc) then `leave; ret`, the target of
 * an early return's jmp. Each such block takes a jmp rel8 to a landing
 * in the dead tail of the long block before it, which runs whole in its
 * trampoline; the second function's two short blocks share that host.
 *
 * shorthosts N: N calls of each, every third call of twoexits returning
 * early; prints the sums. shorthosts stdin: rounds until its standard
 * input ends, a heartbeat ("beat S TOTAL") every half second
 * (beats.h), for an attach. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "beats.h"

static volatile long sink;

__attribute__((noinline)) static void leaf(long x)
{
	sink += x;
}

/* LONGBLOCK is straight-line code of well over 128 bytes at -O0. */
#define LONGBLOCK(a)                                                    \
	sink = (a) * 3; sink = (a) + 5; sink = (a) ^ 9; sink = (a) - 11; \
	sink = (a) * 13; sink = (a) + 15; sink = (a) ^ 17; sink = (a) - 19; \
	sink = (a) * 21; sink = (a) + 23; sink = (a) ^ 25; sink = (a) - 27

void oneexit(long a)
{
	LONGBLOCK(a);
	leaf(a); /* ONEEXIT_CALL */
} /* ONEEXIT_END */

long twoexits(long a)
{
	long rc = a;
	if (a % 3 == 0)
		return 7; /* TWOEXITS_EARLY */
	LONGBLOCK(a);
	leaf(a);
	return rc; /* TWOEXITS_RC */
} /* TWOEXITS_END */

static long total;

static void rounds(long n)
{
	for (long i = 0; i < n; i++) {
		oneexit(i);
		total += twoexits(i);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "stdin"))
		return beatUntilEOF(rounds);
	long n = argc > 1 ? atol(argv[1]) : 30000;
	rounds(n);
	printf("total %ld\n", total);
	return 0;
}
