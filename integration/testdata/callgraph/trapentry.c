/* The trap-side test of indirect calls under the in-process engine
 * (callkinds_test.go): tiny is a one-byte function with another right
 * after it, so its entry has no room for a jump and keeps its breakpoint;
 * main calls it 5 times through a pointer, and callvia calls callee 3
 * times through another. */
#include <stdio.h>

void tiny(void);
__asm__(".text\n"
	".globl tiny\n.type tiny, @function\ntiny:\n\tret\n.size tiny, 1\n"
	".globl tiny2\n.type tiny2, @function\ntiny2:\n\tret\n.size tiny2, 1\n");

__attribute__((noipa)) int callee(int x) { return x + 1; }

void (*volatile tp)(void) = tiny;
int (*volatile fp)(int) = callee;

__attribute__((noipa)) int callvia(void)
{
	int s = 0;
	for (int i = 0; i < 3; i++)
		s += fp(i); /* site:callee */
	return s;
}

int main(void)
{
	for (int i = 0; i < 5; i++)
		tp(); /* site:tiny */
	printf("%d\n", callvia());
	return 0;
}
