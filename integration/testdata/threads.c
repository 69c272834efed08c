/*
 * threads.c: 4 threads call work on the same sites at the same time.
 * A barrier starts them together. argv[1] is the number of calls per thread
 * (default 25000); the program prints the total it made.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4

static pthread_barrier_t start;
static long per_thread = 25000;
static volatile long sink;

__attribute__((noipa)) long
work(long x)
{
	long y = x ^ 0x5a; /* WORK_BODY */
	return y + 1;
}

static void *
worker(void *arg)
{
	long i, s = 0;

	(void)arg;
	pthread_barrier_wait(&start);
	for (i = 0; i < per_thread; i++)
		s += work(i);
	sink += s;
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t t[NTHREADS];
	int i;

	if (argc > 1)
		per_thread = atol(argv[1]);
	pthread_barrier_init(&start, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
	for (i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	printf("calls %ld\n", per_thread * NTHREADS);
	return 0;
}
