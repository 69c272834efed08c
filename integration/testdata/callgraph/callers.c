/*
 * callers.c: one function entered through a pointer from eight call
 * sites, each in a caller of its own: caller K calls it K times (36 calls
 * in all, hub counts them). noipa keeps every function whole; the pointer
 * is volatile, so each call stays an indirect call, and no caller's last
 * call becomes a jump (no-optimize-sibling-calls), unless SIBLING is
 * defined: then at -O2 the last call of caller 1 and 2 is a jmp *%rax.
 */
#include <stdio.h>

#ifdef SIBLING
#define CALLS noipa
#else
#define CALLS noipa, optimize("no-optimize-sibling-calls")
#endif

static long calls;

__attribute__((noipa)) void
hub(int k)
{
	calls += k > 0;
}

void (*volatile hubp)(int) = hub;

__attribute__((CALLS)) void
caller1(void)
{
	for (int i = 0; i < 1; i++)
		hubp(1); /* site:caller1 */
}

__attribute__((CALLS)) void
caller2(void)
{
	for (int i = 0; i < 2; i++)
		hubp(2); /* site:caller2 */
}

__attribute__((CALLS)) void
caller3(void)
{
	for (int i = 0; i < 3; i++)
		hubp(3); /* site:caller3 */
}

__attribute__((CALLS)) void
caller4(void)
{
	for (int i = 0; i < 4; i++)
		hubp(4); /* site:caller4 */
}

__attribute__((CALLS)) void
caller5(void)
{
	for (int i = 0; i < 5; i++)
		hubp(5); /* site:caller5 */
}

__attribute__((CALLS)) void
caller6(void)
{
	for (int i = 0; i < 6; i++)
		hubp(6); /* site:caller6 */
}

__attribute__((CALLS)) void
caller7(void)
{
	for (int i = 0; i < 7; i++)
		hubp(7); /* site:caller7 */
}

__attribute__((CALLS)) void
caller8(void)
{
	for (int i = 0; i < 8; i++)
		hubp(8); /* site:caller8 */
}

int
main(void)
{
	caller1();
	caller2();
	caller3();
	caller4();
	caller5();
	caller6();
	caller7();
	caller8();
	printf("callers %ld\n", calls);
	return 0;
}
