/*
 * rewrite.c: a block whose code the program changes before it first runs,
 * so that the block the plan read in the file no longer runs out of line
 * when patchprof patches it. The three nops after the 2-byte nop at the
 * start of step's if-body become pushf; popf; nop (as harmless, but popf
 * cannot run out of line): the site keeps its breakpoint, and a trampoline
 * whose way out was aimed at that site's trampoline must be aimed back at
 * the site. step is called 100 times, its body runs 96 times (x >= 4).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern char rewritten[];

__attribute__((noinline)) int
step(int x)
{
	int y = x * 3;

	if (y > 10) { /* STEP_IF */
		__asm__ volatile("xchg %%ax, %%ax\n.globl rewritten\nrewritten: nop; nop; nop" ::: "memory", "cc");
		y -= 10; /* STEP_BODY */
	}
	return y; /* STEP_RETURN */
}

int
main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t at = (uintptr_t)rewritten & ~(uintptr_t)(page - 1);
	long sum = 0;
	int i;

	if (mprotect((void *)at, 2 * page, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
		perror("mprotect");
		return 1;
	}
	memcpy(rewritten, "\x9c\x9d\x90", 3); /* pushf; popf; nop */
	for (i = 0; i < 100; i++)
		sum += step(i);
	printf("sum %ld\n", sum);
	return 0;
}
