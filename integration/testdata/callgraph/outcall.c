/*
 * outcall.c: a call through a pointer into the C library (free), then a
 * direct call of a counted function at the same depth: caller does both
 * 10 times, so hub is called directly 10 times from caller, and once
 * through a pointer from main. hub's address is taken, so its entry looks
 * for a pending indirect call; the one into free must not be taken for
 * it. noipa keeps the functions whole, and the pointers are volatile.
 */
#include <stdio.h>
#include <stdlib.h>

static long calls;

__attribute__((noipa)) void
hub(void)
{
	calls++;
}

void (*volatile hubp)(void) = hub;
void (*volatile freep)(void *) = free;

__attribute__((noipa, optimize("no-optimize-sibling-calls"))) void
caller(void)
{
	void *p = malloc(16);

	freep(p); /* site:free */
	hub();    /* site:hub */
}

int
main(void)
{
	for (int i = 0; i < 10; i++)
		caller();
	hubp(); /* site:main */
	printf("outcall %ld\n", calls);
	return 0;
}
