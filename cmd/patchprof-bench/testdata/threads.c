/*
 * threads.c: 4 threads hammer the same functions at the same time, the
 * multi-threaded benchmark of bench/ (issue 13): each computes fib(n)
 * recursively (argv[1], default 25: 242,785 calls of fib and as many of
 * leaf per thread). A barrier starts them together. Compiled-in counters
 * shared by the threads (gcc --coverage) ping-pong between CPUs here.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4

static pthread_barrier_t start;
static int n = 25;

__attribute__((noipa)) long
leaf(long x)
{
	return x < 2 ? x : 0;
}

__attribute__((noipa)) long
fib(long k)
{
	return k < 2 ? leaf(k) : fib(k - 1) + fib(k - 2);
}

static void *
worker(void *arg)
{
	pthread_barrier_wait(&start);
	*(long *)arg = fib(n);
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t t[NTHREADS];
	long r[NTHREADS], sum = 0;
	int i;

	if (argc > 1)
		n = atoi(argv[1]);
	pthread_barrier_init(&start, NULL, NTHREADS);
	for (i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, &r[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		sum += r[i];
	}
	printf("sum %ld\n", sum);
	return 0;
}
