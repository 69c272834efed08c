/* 8 threads each call a, b and c 5,000 times: 40,000 calls of each. The
 * three sites are driven by all threads at once. */
#include <pthread.h>
#include <stdio.h>

#define THREADS 8
#define ITERS 5000

static volatile long sink;

__attribute__((noinline)) void a(void) { __atomic_add_fetch(&sink, 1, __ATOMIC_RELAXED); }
__attribute__((noinline)) void b(void) { __atomic_add_fetch(&sink, 2, __ATOMIC_RELAXED); }
__attribute__((noinline)) void c(void) { __atomic_add_fetch(&sink, 3, __ATOMIC_RELAXED); }

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITERS; i++) {
		a();
		b();
		c();
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	printf("sink %ld\n", sink);
	return 0;
}
