/*
 * rewrite.c: a block whose code the program changes before it first runs,
 * so that the block the plan read in the file no longer runs out of line
 * when patchprof patches it. The three nops after the 2-byte nop at the
 * start of step's if-body become pushf; popf; nop (as harmless, but popf
 * cannot run out of line): the site keeps its breakpoint, and a trampoline
 * whose way out was aimed at that site's trampoline must be aimed back at
 * the site. step is called 100 times, its body runs 96 times (x >= 4).
 * main finds the nops by their bytes (the xchg's 0x90, then the three
 * nops: its 0x66 may already be an int3): a symbol or a pointer in data
 * would tell patchprof's analysis that code may branch there
 * (symtab.Targets), and the patch would not cover them in the first place.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) int
step(int x)
{
	int y = x * 3;

	if (y > 10) { /* STEP_IF */
		__asm__ volatile("xchg %%ax, %%ax\nnop; nop; nop" ::: "memory", "cc");
		y -= 10; /* STEP_BODY */
	}
	return y; /* STEP_RETURN */
}

int
main(void)
{
	long page = sysconf(_SC_PAGESIZE);
	char *rewritten = memmem((void *)step, 256, "\x90\x90\x90\x90", 4);
	uintptr_t at;
	long sum = 0;
	int i;

	if (rewritten == NULL) {
		fprintf(stderr, "the nops are not in step\n");
		return 1;
	}
	rewritten += 1; /* past xchg %ax, %ax */
	at = (uintptr_t)rewritten & ~(uintptr_t)(page - 1);

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
