/* pingpong: two threads pass a byte back and forth through two pipes n
 * times, each calling a counted function once a pass: every pass blocks
 * each thread once, so the run is made of context switches, as a server's
 * is. Its cost under a profiler is what a switch of a profiled thread
 * costs (under the jump engine, a thread whose GS base is not 0). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int there[2], back[2];
static long n;

__attribute__((noinline)) long pass(long s) { return s + 1; }

static void *
peer(void *arg)
{
	long s = 0;
	char c;

	(void)arg;
	for (long i = 0; i < n; i++) {
		if (read(there[0], &c, 1) != 1)
			break;
		s = pass(s);
		if (write(back[1], &c, 1) != 1)
			break;
	}
	return (void *)s;
}

int
main(int argc, char **argv)
{
	pthread_t t;
	long s = 0;
	void *ps;
	char c = 'x';

	n = argc > 1 ? atol(argv[1]) : 50000;
	if (pipe(there) != 0 || pipe(back) != 0 || pthread_create(&t, NULL, peer, NULL) != 0) {
		perror("pingpong");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		s = pass(s);
		if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1) {
			perror("pipe");
			return 1;
		}
	}
	pthread_join(t, &ps);
	printf("%ld %ld\n", s, (long)ps);
	return 0;
}
