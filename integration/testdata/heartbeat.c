/* Three threads call work() every 200 us; main prints a heartbeat with the
 * total number of calls once a second for argv[1] seconds, then exits 0. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile long calls[3];

__attribute__((noinline)) void work(int k)
{
	calls[k]++; /* WORK_BODY */
}

static void *run(void *a)
{
	int k = (int)(long)a;
	for (;;) {
		work(k);
		usleep(200);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 5;
	pthread_t t[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], 0, run, (void *)i);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (int s = 1; s <= seconds; s++) {
		usleep(500000);
		printf("beat %d %ld\n", s, calls[0] + calls[1] + calls[2]);
		fflush(stdout);
	}
	return 0;
}
