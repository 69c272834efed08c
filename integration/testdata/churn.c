/* Creates short-lived threads ("threads") or child processes ("fork") for
 * argv[2] half-seconds, or with argv[2] "stdin" until its standard input
 * ends, each calling work() 10 times. Prints "ready PID",
 * then "ok N" at the end, or "child failed" and exits 1 if a child did not
 * exit 0 (it would die of SIGTRAP on a breakpoint left behind). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile long calls;

__attribute__((noinline)) void work(void)
{
	__sync_fetch_and_add(&calls, 1);
}

static void *run(void *a)
{
	(void)a;
	for (int i = 0; i < 10; i++)
		work();
	return 0;
}

static volatile int inputEnded;

/* untilEOF reads standard input to its end, then ends the loop. */
static void *untilEOF(void *a)
{
	char buf[256];
	(void)a;
	while (read(0, buf, sizeof buf) > 0)
		;
	inputEnded = 1;
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int forks = argc > 1 && !strcmp(argv[1], "fork");
	int stdinMode = argc > 2 && !strcmp(argv[2], "stdin");
	double end = now() + (argc > 2 ? atoi(argv[2]) : 6) * 0.5;
	long n = 0;
	if (stdinMode) {
		pthread_t t;
		pthread_create(&t, 0, untilEOF, 0);
	}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (stdinMode ? !inputEnded : now() < end) {
		if (forks) {
			pid_t p = fork();
			if (p == 0) {
				run(0);
				_exit(0);
			}
			int st;
			if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
				printf("child failed: status 0x%x\n", st);
				return 1;
			}
		} else {
			pthread_t t;
			pthread_create(&t, 0, run, 0);
			pthread_join(t, 0);
		}
		n++;
		usleep(1000);
	}
	printf("ok %ld %.3f\n", n, stdinMode ? 0.0 : now() - end);
	return 0;
}
