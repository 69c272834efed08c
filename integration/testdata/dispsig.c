/* dispsig.c: signals sent to the main thread as fast as it takes them
 * while it runs a switch whose empty cases share their jump-table target
 * with the default (integration/jump_test.go). Under the in-process
 * engine the dispatch's trampoline makes two counter updates, the
 * block's and the table entry's; signals land between them, and each
 * case label must still count exactly the values that reached it.
 *
 * The loop runs, a chunk of rounds at a time, until the handler has run
 * a given number of times. A second thread sends SIGUSR1 with tgkill, waits until the handler has
 * run and then until the loop has gone a varying number of rounds on (so
 * the signals never outrun it, however slowly a tracer lets it go, and
 * land all over it). The program tallies the values itself, in a loop apart from
 * the switch, and prints how many times it ran the loop, the tallies
 * over all of them and the handler's runs. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile long handled;
static volatile long round_; /* the loop's rounds so far, for the sender */
static volatile int done;
static pid_t main_tid;

static void on_usr1(int sig) /* on_usr1 */
{
	(void)sig;
	handled++;
}

static void *sender(void *arg)
{
	(void)arg;
	unsigned x = 12345;
	while (!done) {
		long before = handled;
		syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
		while (handled == before && !done)
			;
		x = x * 1103515245 + 12345;
		long until = round_ + 1 + (x >> 16) % 8;
		while (round_ < until && !done)
			;
	}
	return NULL;
}

static int op(long i)
{
	return i % 7 == 0 ? 5 : (int)(i % 10);
}

__attribute__((noipa)) static long run(long n)
{
	long acc = 0;
	for (long end = round_ + n; round_ < end; round_++) {
		switch (op(round_)) { /* SWITCH */
		case 1:
			acc += 1;
			break;
		case 2:
			acc *= 2;
			break;
		case 3:
			acc -= 3;
			break;
		case 4:
			acc += 4;
			break;
		case 5: /* SKIP_CASE */
			break;
		case 6:
			acc ^= 6;
			break;
		case 8: /* EIGHT_CASE */
			break;
		default: /* RUN_DEFAULT */
			break;
		}
	}
	return acc;
}

int main(int argc, char **argv)
{
	long chunk = argc > 1 ? atol(argv[1]) : 1000000;
	long want = argc > 2 ? atol(argv[2]) : 3000;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	main_tid = (pid_t)syscall(SYS_gettid);
	pthread_t th;
	pthread_create(&th, NULL, sender, NULL);
	/* Chunks until the handler has run want times, however the machine
	 * schedules the sender. */
	long acc = 0, runs = 0;
	do {
		acc += run(chunk);
		runs++;
	} while (handled < want);
	done = 1;
	pthread_join(th, NULL);
	long skip = 0, eight = 0, other = 0;
	for (long i = 0; i < round_; i++) {
		int o = op(i);
		skip += o == 5;
		eight += o == 8;
		other += o == 0 || o == 7 || o == 9;
	}
	printf("%ld %ld %ld %ld %ld %ld\n", runs, skip, eight, other, handled, acc);
	return 0;
}
