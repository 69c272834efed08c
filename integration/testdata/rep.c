/*
 * rep.c: functions whose first instruction repeats in place.
 *   repcopy: rep movsb; one execution of the instruction moves rcx bytes,
 *            so 100 calls with rcx=4096 are 100 executions, not 409600.
 *   selfloop: loop selfloop; the instruction jumps to itself, so each trip
 *            is a new execution: 10 calls with rcx=7 are 70 executions.
 * They are called from inline asm, so build with -mno-red-zone: the call
 * pushes its return address below the stack pointer.
 *
 * rep alarm: 20 copies of 16 MiB with a 1 ms SIGALRM timer whose handler
 * is profiled too, so the handler hits a site while a rep instruction is
 * half done.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

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
static volatile sig_atomic_t alarms;

void on_alrm(int sig)
{
	(void)sig;
	alarms++;
}

static int alarm_copies(void)
{
	const unsigned long size = 16ul << 20;
	char *a = malloc(size), *b = malloc(size);
	struct itimerval it = {{0, 1000}, {0, 1000}};
	int i;

	if (!a || !b)
		return 1;
	memset(a, 7, size);
	signal(SIGALRM, on_alrm);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < 20; i++) {
		void *d = b;
		const void *s = a;
		unsigned long n = size;

		__asm__ volatile("call repcopy"
				 : "+D"(d), "+S"(s), "+c"(n)
				 :
				 : "memory", "cc");
		if (n != 0 || memcmp(a, b, size) != 0) {
			printf("repcopy failed\n");
			return 1;
		}
		b[0] = 0;
	}
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	printf("copies 20 alarms %d\n", (int)alarms);
	return 0;
}

int
main(int argc, char **argv)
{
	int i;
	long trips = 0;

	if (argc > 1 && strcmp(argv[1], "alarm") == 0)
		return alarm_copies();
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
