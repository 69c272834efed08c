/*
 * tailptr.c: functions that leave through a pointer with a tail jump
 * (at -O2, jmp *%rax). relay jumps to the function its first argument
 * picks: square 3 times, cube 4 times. outward (whose entry block is a
 * test: the flags are dead at its entry, which checks the calls
 * entering it under the in-process engine) jumps through a pointer
 * to the C library's abs, which is not counted, and is called 5 times
 * from one site of main, then once through a pointer (so that its entry
 * is one a pointer may reach): those calls are its own entries, never
 * taken for its tail jump's callee (the pending jump is stale once abs
 * returns to main).
 */
#include <stdio.h>
#include <stdlib.h>

static long sum;

__attribute__((noipa)) long
square(long x)
{
	sum += x * x;
	return sum;
}

__attribute__((noipa)) long
cube(long x)
{
	sum += x * x * x;
	return sum;
}

long (*volatile pick[2])(long) = {square, cube};

__attribute__((noipa)) long
relay(int k, long x)
{
	return pick[k](x); /* site:relay */
}

int (*volatile absp)(int) = abs;

__attribute__((noipa)) int
outward(int x)
{
	if (x == 42)
		return 0;
	return absp(x); /* site:outward */
}

int (*volatile outp)(int) = outward;

int
main(void)
{
	long t = 0;
	for (int i = 0; i < 7; i++)
		t += relay(i >= 3, i);
	int a = 0;
	for (int i = 0; i < 5; i++)
		a += outward(-i);
	a += outp(-9); /* site:main */
	printf("tailptr %ld %d\n", t, a);
	return 0;
}
