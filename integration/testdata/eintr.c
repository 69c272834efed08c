/* A thread asleep in epoll_wait (no timeout) on a pipe while the main
 * thread calls 64 distinct functions once each: under patchprof each first
 * hit patches a site, and the tracer stops the other threads to do it.
 * epoll_wait returns EINTR after any stop (signal(7)); the program must
 * never see one of patchprof's. The main thread then writes to the pipe:
 * the thread prints "woke 1" and the number of EINTRs it saw ("eintr 0"),
 * and the program exits 0, or 1 if it saw any. The main thread also sends
 * the waiter SIGUSR1, whose handler (no SA_RESTART) ends its epoll_wait with
 * an EINTR of the program's own, which it does not count; after the handler,
 * rt_sigreturn "returns" that EINTR: it is no call to restart. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static int fds[2], ep, eintrs;
static volatile sig_atomic_t handled;
static volatile long sink;

#define F(n) __attribute__((noinline)) void f##n(void) { sink += n; }
#define F8(a) F(a##0) F(a##1) F(a##2) F(a##3) F(a##4) F(a##5) F(a##6) F(a##7)
F8(1) F8(2) F8(3) F8(4) F8(5) F8(6) F8(7) F8(8)
#define C8(a) f##a##0(); f##a##1(); f##a##2(); f##a##3(); f##a##4(); f##a##5(); f##a##6(); f##a##7(); \
	pthread_kill(t, SIGUSR1); nanosleep(&tick, NULL);

static void on_usr1(int sig)
{
	(void)sig;
	handled++;
}

static void *waiter(void *arg)
{
	struct epoll_event ev;
	int n;
	for (;;) {
		int h = handled;
		if ((n = epoll_wait(ep, &ev, 1, -1)) >= 0 || errno != EINTR)
			break;
		if (handled == h)
			eintrs++; /* no handler of ours ran: not the program's EINTR */
	}
	printf("woke %d\n", n);
	return arg;
}

int main(void)
{
	struct epoll_event ev = {.events = EPOLLIN};
	pthread_t t;
	struct timespec pause = {0, 100000000}, tick = {0, 1000000};
	struct sigaction sa = {.sa_handler = on_usr1};
	if (sigaction(SIGUSR1, &sa, NULL) || pipe(fds) || (ep = epoll_create1(0)) < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev))
		return 2;
	pthread_create(&t, NULL, waiter, NULL);
	nanosleep(&pause, NULL); /* the waiter is asleep in epoll_wait */
	C8(1) C8(2) C8(3) C8(4) C8(5) C8(6) C8(7) C8(8)
	if (write(fds[1], "x", 1) != 1)
		return 2;
	pthread_join(t, NULL);
	printf("eintr %d\n", eintrs);
	return eintrs != 0;
}
