/* Two functions whose cost per call is known by construction: thrice runs
 * the same dependent floating-point loop as once, three times as many
 * iterations; both are called CALLS times. A dependent chain of
 * multiply-adds runs at the FP latency whatever the machine, so thrice's
 * time per call is three times once's. With an argument N > 1, N threads
 * each make the calls (the test of a multi-threaded target).
 * With COSTS_CPU set in its environment, it prints its own CPU time
 * (user and system, all threads) to stderr at its end: "cpu NS", what
 * BenchmarkTimeOverhead compares between sampled and plain runs.
 * Build: gcc -g -O1 -pthread -o costs costs.c */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CALLS 200
#define ITERS 2000000L

static volatile double sink;

/* The loop is written out in each function, so that its time is the
 * function's own (flat) time. */
#define CHAIN(n, x)                            \
	for (long i = 0; i < (n); i++)         \
		x = x * 0.999999 + 0.000001

__attribute__((noinline)) double once(double x)
{
	CHAIN(ITERS, x);
	return x;
}

__attribute__((noinline)) double thrice(double x)
{
	CHAIN(3 * ITERS, x);
	return x;
}

static void *work(void *arg)
{
	double x = 0.5;
	for (int i = 0; i < CALLS; i++) {
		x = once(x);
		x = thrice(x);
	}
	sink = x;
	return arg;
}

/* report prints the process's CPU time when COSTS_CPU is set. */
static void report(void)
{
	struct timespec ts;
	if (getenv("COSTS_CPU") && clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
		fprintf(stderr, "cpu %lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	if (n <= 1) {
		work(NULL);
		report();
		return 0;
	}
	pthread_t t[16];
	for (int i = 0; i < n && i < 16; i++)
		pthread_create(&t[i], NULL, work, NULL);
	for (int i = 0; i < n && i < 16; i++)
		pthread_join(t[i], NULL);
	printf("%d threads\n", n);
	report();
	return 0;
}
