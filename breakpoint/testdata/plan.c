/* Target for breakpoint's plan tests: built with gcc -g at -O0 and -O2. */
#include <stddef.h>

int other(int);

/* Hand-written functions with known bytes, for the tests that lay a
   synthetic line table over them. */
__asm__(
	".pushsection .text\n"
	".globl crafted\n"
	".type crafted, @function\n"
	"crafted:\n"
	"	movabsq $0x1122334455667788, %rax\n" /* +0:  48 b8 imm64 (10 bytes) */
	"	rep movsb\n"                          /* +10: f3 a4 */
	"	rep movsq\n"                          /* +12: f3 48 a5 */
	"	ret\n"                                /* +15: c3 */
	".size crafted, .-crafted\n"
	".globl undecodable\n"
	".type undecodable, @function\n"
	"undecodable:\n"
	"	nop\n"                                /* +0: 90 */
	"	.byte 0x06\n"                         /* +1: push %es, invalid in 64-bit mode */
	"	ret\n"                                /* +2: c3 */
	".size undecodable, .-undecodable\n"
	".globl badstart\n"
	".type badstart, @function\n"
	"badstart:\n"
	"	.byte 0x06\n"                         /* +0: invalid in 64-bit mode */
	"	ret\n"                                /* +1: c3 */
	".size badstart, .-badstart\n"
	".globl repentry\n"
	".type repentry, @function\n"
	"repentry:\n"
	"	rep stosb\n"                          /* +0: f3 aa */
	"	ret\n"
	".size repentry, .-repentry\n"
	".popsection\n");

int work(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += i * other(i);
	return s;
}

static int twice(int x)
{
	return 2 * x;
}

int main(int argc, char **argv)
{
	(void)argv;
	return work(argc) + twice(argc) > 1000;
}
