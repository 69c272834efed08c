/*
 * rep.c: functions whose first instruction repeats in place.
 *   repcopy: rep movsb; one execution of the instruction moves rcx bytes,
 *            so 100 calls with rcx=4096 are 100 executions, not 409600.
 *   selfloop: loop selfloop; the instruction jumps to itself, so each trip
 *            is a new execution: 10 calls with rcx=7 are 70 executions.
 * They are called from inline asm, so build with -mno-red-zone: the call
 * pushes its return address below the stack pointer.
 */
#include <stdio.h>
#include <string.h>

__asm__(
	".text\n"
	".globl repcopy\n"
	".type repcopy, @function\n"
	"repcopy:\n"
	"	rep movsb\n"
	"	ret\n"
	".size repcopy, .-repcopy\n"
	".globl selfloop\n"
	".type selfloop, @function\n"
	"selfloop:\n"
	"	loop selfloop\n"
	"	ret\n"
	".size selfloop, .-selfloop\n");

static char src[4096], dst[4096];

int
main(void)
{
	int i;
	long trips = 0;

	for (i = 0; i < (int)sizeof src; i++)
		src[i] = (char)(i * 7);
	for (i = 0; i < 100; i++) {
		void *d = dst;
		const void *s = src;
		unsigned long n = sizeof src;

		dst[0] = 1;
		__asm__ volatile("call repcopy"
				 : "+D"(d), "+S"(s), "+c"(n)
				 :
				 : "memory", "cc");
		if (n != 0 || memcmp(dst, src, sizeof src) != 0) {
			printf("repcopy failed\n");
			return 1;
		}
	}
	for (i = 0; i < 10; i++) {
		unsigned long n = 7;

		__asm__ volatile("call selfloop" : "+c"(n) : : "cc");
		trips += 7 - (long)n;
	}
	printf("copies 100 trips %ld\n", trips);
	return 0;
}
