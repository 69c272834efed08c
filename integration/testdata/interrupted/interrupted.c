/*
 * interrupted.c: activations left in the middle of a function. Each run
 * goes down DEPTH frames of level, each running a loop (work) before it
 * calls the next, and at the bottom ends in the way argv[1] says:
 *   segv          a fault in the middle of a loop's block
 *   longjmp       longjmp back to main, 5 times
 *   exit, _exit   exit(3) or _exit(4)
 *   pthread_exit  a thread goes down the frames and calls pthread_exit
 *   cancel        a thread goes down the frames and blocks in pause();
 *                 main cancels it
 *   siglongjmp    the fault of segv, 5 times, each caught by a SIGSEGV
 *                 handler that siglongjmps back to main
 *   sigretry      the fault of segv on a page with no access, 5 times,
 *                 each caught by a handler that opens the page and
 *                 returns: the store is retried, and the loop runs on
 *   acancel       a thread in PTHREAD_CANCEL_ASYNCHRONOUS goes down the
 *                 frames with glibc's cancellation signal blocked; main
 *                 cancels it; in the middle of segv's loop it unblocks
 *                 the signal with a system call of its own code, and the
 *                 signal's handler unwinds it from right after that call
 * The frames above the bottom never run the code after their call.
 */
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { SEGV, LONGJMP, EXIT, UEXIT, PEXIT, CANCEL, SIGLONGJMP, SIGRETRY, ACANCEL, NMODES };

static int how;
static int *volatile nowhere;
static volatile long sink;
static jmp_buf env;
static sigjmp_buf senv;
static char *page;
static int gate[2];

/* SIGCANCEL, glibc's cancellation signal, as a kernel sigset_t. */
static const unsigned long cancelset = 1UL << (32 - 1);

/* unblockCancel unblocks SIGCANCEL with a syscall instruction of this
 * program, so that the pending signal comes right after it, here. */
static inline void
unblockCancel(void)
{
	long ret;
	register long r10 __asm__("r10") = 8;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"((long)SYS_rt_sigprocmask), "D"((long)SIG_UNBLOCK), "S"(&cancelset), "d"(0L), "r"(r10)
			 : "rcx", "r11", "memory");
}
static sem_t ready;

__attribute__((noipa)) static int
work(int n)
{
	int i, s = 0;

	for (i = 0; i < n; i++) {
		if (i % 3 == 0)
			s += i;
		else
			s -= 1;
	}
	return s;
}

__attribute__((noipa)) static int
bottom(int n)
{
	int i;

	switch (how) {
	case SEGV:
	case SIGLONGJMP:
	case SIGRETRY:
		for (i = 0; i < n; i++) {
			sink += i;
			if (i == n / 2)
				*nowhere = i; /* SEGV_LINE */
			sink -= 1;
		}
		break;
	case ACANCEL: {
		char c;

		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &cancelset, NULL, 8);
		sem_post(&ready);
		syscall(SYS_read, gate[0], &c, 1); /* not a cancellation point */
		for (i = 0; i < n; i++) {
			sink += i;
			if (i == n / 2)
				unblockCancel();
			sink -= 1;
		}
		break;
	}
	case LONGJMP:
		longjmp(env, n);
	case EXIT:
		exit(3);
	case UEXIT:
		_exit(4);
	case PEXIT:
		pthread_exit(NULL);
	case CANCEL:
		sem_post(&ready);
		for (;;)
			pause();
	}
	return n;
}

__attribute__((noipa)) static int
level(int depth, int n)
{
	int s = work(n);

	if (depth == 0)
		return s + bottom(n);
	if (s & 1)
		s += level(depth - 1, n + 1);
	else
		s -= level(depth - 1, n + 2);
	sink += s; /* AFTER_CALL */
	return s;
}

static void
caught(int sig)
{
	(void)sig;
	if (how == SIGLONGJMP)
		siglongjmp(senv, 1);
	mprotect(page, 4096, PROT_READ | PROT_WRITE);
}

static void *
thread(void *arg)
{
	(void)arg;
	if (how == ACANCEL)
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	sink += level(4, 10);
	return NULL;
}

int
main(int argc, char **argv)
{
	static const char *const names[] = {"segv", "longjmp", "exit", "_exit", "pthread_exit", "cancel", "siglongjmp", "sigretry", "acancel"};
	volatile int k;
	pthread_t th;

	if (argc < 2)
		return 2;
	for (how = 0; how < NMODES && strcmp(argv[1], names[how]) != 0; how++)
		;
	sink += work(20);
	switch (how) {
	case LONGJMP:
		for (k = 0; k < 5; k++)
			if (setjmp(env) == 0)
				sink += level(4, 10 + k);
			else
				sink += work(k); /* LONGJMP_BACK */
		break;
	case PEXIT:
	case CANCEL:
	case ACANCEL:
		sem_init(&ready, 0, 0);
		if (how == ACANCEL && pipe(gate) != 0)
			return 2;
		pthread_create(&th, NULL, thread, NULL);
		if (how != PEXIT) {
			sem_wait(&ready);
			pthread_cancel(th);
		}
		if (how == ACANCEL && write(gate[1], "x", 1) != 1)
			return 2;
		pthread_join(th, NULL);
		break;
	case SIGLONGJMP:
	case SIGRETRY:
		page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (page == MAP_FAILED)
			return 2;
		if (how == SIGRETRY)
			nowhere = (int *)page;
		signal(SIGSEGV, caught);
		for (k = 0; k < 5; k++) {
			mprotect(page, 4096, PROT_NONE);
			if (sigsetjmp(senv, 1) == 0)
				sink += level(4, 10 + k);
			else
				sink += work(k); /* SIGLONGJMP_BACK */
		}
		break;
	case NMODES:
		return 2;
	default:
		sink += level(4, 10);
	}
	printf("sink %ld\n", sink);
	return 0;
}
