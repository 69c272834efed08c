/*
 * manycallers.c: one function entered through a pointer from 24 call
 * sites, each in a caller of its own: caller K calls it K times (300
 * calls in all, hub counts them). More sites than an entry's call slots
 * per thread (jump.CallSlots): the calls past them are counted by the
 * monitor. noipa keeps every function whole; the pointer is volatile, so
 * each call stays an indirect call, and no caller's last call becomes a
 * jump (no-optimize-sibling-calls).
 */
#include <stdio.h>

#define CALLS noipa, optimize("no-optimize-sibling-calls")

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

__attribute__((CALLS)) void
caller9(void)
{
	for (int i = 0; i < 9; i++)
		hubp(9); /* site:caller9 */
}

__attribute__((CALLS)) void
caller10(void)
{
	for (int i = 0; i < 10; i++)
		hubp(10); /* site:caller10 */
}

__attribute__((CALLS)) void
caller11(void)
{
	for (int i = 0; i < 11; i++)
		hubp(11); /* site:caller11 */
}

__attribute__((CALLS)) void
caller12(void)
{
	for (int i = 0; i < 12; i++)
		hubp(12); /* site:caller12 */
}

__attribute__((CALLS)) void
caller13(void)
{
	for (int i = 0; i < 13; i++)
		hubp(13); /* site:caller13 */
}

__attribute__((CALLS)) void
caller14(void)
{
	for (int i = 0; i < 14; i++)
		hubp(14); /* site:caller14 */
}

__attribute__((CALLS)) void
caller15(void)
{
	for (int i = 0; i < 15; i++)
		hubp(15); /* site:caller15 */
}

__attribute__((CALLS)) void
caller16(void)
{
	for (int i = 0; i < 16; i++)
		hubp(16); /* site:caller16 */
}

__attribute__((CALLS)) void
caller17(void)
{
	for (int i = 0; i < 17; i++)
		hubp(17); /* site:caller17 */
}

__attribute__((CALLS)) void
caller18(void)
{
	for (int i = 0; i < 18; i++)
		hubp(18); /* site:caller18 */
}

__attribute__((CALLS)) void
caller19(void)
{
	for (int i = 0; i < 19; i++)
		hubp(19); /* site:caller19 */
}

__attribute__((CALLS)) void
caller20(void)
{
	for (int i = 0; i < 20; i++)
		hubp(20); /* site:caller20 */
}

__attribute__((CALLS)) void
caller21(void)
{
	for (int i = 0; i < 21; i++)
		hubp(21); /* site:caller21 */
}

__attribute__((CALLS)) void
caller22(void)
{
	for (int i = 0; i < 22; i++)
		hubp(22); /* site:caller22 */
}

__attribute__((CALLS)) void
caller23(void)
{
	for (int i = 0; i < 23; i++)
		hubp(23); /* site:caller23 */
}

__attribute__((CALLS)) void
caller24(void)
{
	for (int i = 0; i < 24; i++)
		hubp(24); /* site:caller24 */
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
	caller9();
	caller10();
	caller11();
	caller12();
	caller13();
	caller14();
	caller15();
	caller16();
	caller17();
	caller18();
	caller19();
	caller20();
	caller21();
	caller22();
	caller23();
	caller24();
	printf("callers %ld\n", calls);
	return 0;
}
