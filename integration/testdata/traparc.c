/*
 * traparc.c: a block of one nop that a conditional jump falls into,
 * before a loop head, as gcc -O2 aligns a loop: too short for a jmp, its
 * next byte a branch target, and its count not given by the others'
 * (walk's flow leaves it open). The in-process engine counts the jump's
 * arc into it instead, in the trampoline of the block before.
 *
 * traparc N calls walk N times, with a length of 0 every fourth call:
 * the nop block runs 3N/4 times (N a multiple of 4), the loop 3 times a
 * call it runs. It prints the sum.
 */
#include <stdio.h>
#include <stdlib.h>

static long data[3] = {1, 2, 3};

__attribute__((noipa)) long
walk(const long *a, long n)
{
	long r;

	if (a == NULL)
		return -1;
	__asm__ volatile("xor %0, %0\n\t"
			 "test %2, %2\n\t"
			 "je 2f\n\t"
			 "nop\n"
			 "1:\tadd (%1), %0\n\t"
			 "add $8, %1\n\t"
			 "dec %2\n\t"
			 "jne 1b\n"
			 "2:"
			 : "=&r"(r), "+r"(a), "+r"(n)
			 :
			 : "cc", "memory"); /* WALK_ASM */
	return r;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, sum = 0;

	for (long i = 0; i < n; i++)
		sum += walk(data, i % 4 == 3 ? 0 : 3);
	printf("%ld\n", sum);
	return 0;
}
