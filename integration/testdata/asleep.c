/* A thread spins while the main thread sleeps in system calls that a
 * stop of the thread would end with EINTR (epoll_wait, whatever the
 * handler) or restart (read): the ptrace fallback of --time must sample the
 * spinner without disturbing the sleeper. Exits 0 when every call returned
 * as it does natively, 3 otherwise. The spinner says it has begun before
 * the main thread sleeps: the first hit of its entry, which the in-process
 * engine patches holding every thread, is then over, and only the sampler
 * stops threads (an EINTR of the patching's is restarted too: eintr.c).
 * Build: gcc -g -O1 -pthread -o asleep asleep.c */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

static int fds[2], begun[2];
static volatile double sink;

static void *spin(void *arg)
{
	double x = 0.5;
	write(begun[1], "b", 1);
	for (long i = 0; i < 300000000L; i++)
		x = x * 0.999999 + 0.000001;
	sink = x;
	write(fds[1], "x", 1);
	return arg;
}

int main(void)
{
	pthread_t t;
	struct epoll_event ev;
	char c;
	int ep = epoll_create1(0);
	if (ep < 0 || pipe(fds) != 0 || pipe(begun) != 0)
		return 2;
	pthread_create(&t, NULL, spin, NULL);
	if (read(begun[0], &c, 1) != 1) /* restarted if interrupted */
		return 2;
	/* Nothing is ever ready: the call must time out after 300 ms. */
	int n = epoll_wait(ep, &ev, 1, 300);
	if (n != 0) {
		printf("epoll_wait returned %d: %s\n", n, strerror(errno));
		return 3;
	}
	ssize_t r = read(fds[0], &c, 1);
	if (r != 1) {
		printf("read returned %zd: %s\n", r, strerror(errno));
		return 3;
	}
	pthread_join(t, NULL);
	printf("ok\n");
	return 0;
}
