/*
 * badcode.c: functions whose control flow cannot be recovered from their
 * bytes, written in assembly: withdata has data after its return (Larus and
 * Ball's data in the text), midinsn branches into the middle of an
 * instruction (both decodings run), truncated's symbol ends in the middle
 * of its first instruction. patchprof --blocks must name each in a note and
 * still count their calls and every other function's blocks.
 */
#include <stdio.h>

int withdata(void);
int midinsn(int);
int truncated(void);

__asm__(
	".text\n"
	".globl withdata\n"
	".type withdata, @function\n"
	"withdata:\n"
	"	movl $1, %eax\n"
	"	ret\n"
	"	.byte 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08\n"
	".size withdata, .-withdata\n"
	/* jnz lands on the 0x90 inside the mov: nop; xor %eax,%eax; ret */
	".globl midinsn\n"
	".type midinsn, @function\n"
	"midinsn:\n"
	"	testl %edi, %edi\n"
	"	jnz 1f+1\n"
	"1:	movl $0xc3c03190, %eax\n"
	"	ret\n"
	".size midinsn, .-midinsn\n"
	".globl truncated\n"
	".type truncated, @function\n"
	"truncated:\n"
	"	movl $2, %eax\n"
	"	ret\n"
	".size truncated, 3\n");

int
main(void)
{
	int sum = 0;
	int i;

	for (i = 0; i < 3; i++) /* BAD_LOOP */
		sum += withdata() + midinsn(i) + truncated();
	printf("sum %d\n", sum);
	return 0;
}
