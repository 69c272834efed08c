// gsrewrite rewrites f's body (not its first byte) before it calls it:
// the 2-byte nop after its prologue, within the 5 bytes a jmp would
// displace, becomes pushf; popf (popf cannot run out of line), and mov
// $5,%eax becomes mov $7,%eax. The in-process engine refuses f's patch at
// its first hit, and patches g: natively "a=7 b=49". Build: gcc -g -O0.
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern char rewritten[];

__attribute__((noinline)) int f(void) {
	__asm__ volatile(".globl rewritten\nrewritten: xchg %%ax, %%ax" ::: "memory", "cc");
	return 5;
}
__attribute__((noinline)) int g(int x) { return x * x; }

int main(void) {
	unsigned char *p = (unsigned char *)f;
	long pg = sysconf(_SC_PAGESIZE);
	uintptr_t base = (uintptr_t)p & ~(uintptr_t)(pg - 1);
	if (mprotect((void *)base, 2 * pg, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
		perror("mprotect");
		return 1;
	}
	int done = 0;
	for (int i = 1; i < 32 && !done; i++) {
		if (p[i] == 0xb8 && p[i + 1] == 5 && p[i + 2] == 0) {
			p[i + 1] = 7;
			done = 1;
		}
	}
	memcpy(rewritten, "\x9c\x9d", 2); // pushf; popf
	mprotect((void *)base, 2 * pg, PROT_READ | PROT_EXEC);
	if (!done) {
		fprintf(stderr, "no mov $5,%%eax in f\n");
		return 1;
	}
	int a = 0, b = 0;
	for (int k = 0; k < 3; k++)
		a = f();
	for (int k = 0; k < 5; k++)
		b = g(a);
	printf("a=%d b=%d\n", a, b);
	return 0;
}
