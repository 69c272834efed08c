/* savedctx: threads and coroutines whose saved contexts lie inside a
 * function when it is first called by someone else (and so patched, under
 * the jump engine, or attached to with -p in between). Each mode prints
 * ready, waits for a line on stdin (the moment to attach), then makes the
 * first call, releases the parked contexts and prints its own counters.
 * With a second argument, hold, it prints held after the first call and
 * waits for another line before releasing them (the moment to detach,
 * with the contexts still parked inside the patched function).
 *
 *   savedctx handler  K threads spin in spin(); each is sent SIGUSR1 and
 *                     parks in the handler on a semaphore, its interrupted
 *                     PC in spin's loop; main calls spin once itself
 *   savedctx coro     K coroutines (makecontext) each call park(), which
 *                     swaps back to main in its middle; main calls park()
 *                     itself, then resumes every coroutine to its end
 *   savedctx first    a thread blocks in a read system call made by the
 *                     first block of gate(), and main waits until it is
 *                     blocked there; main calls gate() itself, then writes
 *                     the byte that releases the thread
 *
 * Build: gcc -g -O0 -pthread savedctx.c
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define K 4

static volatile int go;
static int one = 1;
static volatile int spinning;
static sem_t release;
static volatile int parked;
static volatile long calls_spin, calls_park, calls_gate;

/* spin counts until *flag is set: a loop whose blocks a signal
 * interrupts. */
__attribute__((noinline)) static long spin(volatile int *flag)
{
	long n = 0;
	calls_spin++;
	__atomic_add_fetch(&spinning, 1, __ATOMIC_SEQ_CST);
	while (!*flag)
		n++;
	return n;
}

static void onusr1(int sig)
{
	(void)sig;
	__atomic_add_fetch(&parked, 1, __ATOMIC_SEQ_CST);
	while (sem_wait(&release) != 0)
		;
}

static void *spinner(void *arg)
{
	(void)arg;
	spin(&go);
	return NULL;
}

static ucontext_t main_ctx, coro_ctx[K];
static char coro_stack[K][64 << 10];

/* park switches back to main in its middle: the coroutine's saved
 * context is inside park when park is first called by main. */
__attribute__((noinline)) static int park(int k, int x)
{
	int y = x * 3 + k;
	calls_park++;
	if (k >= 0)
		swapcontext(&coro_ctx[k], &main_ctx);
	y += x;
	return y;
}

static void coro(int k)
{
	int r = park(k, k + 1);
	printf("coro %d: %d\n", k, r);
}

static int pipefd[2];
static volatile long gatetid;

/* gate's first block makes the read system call itself: a thread blocked
 * in it is stopped inside that block. */
__attribute__((noinline)) static long gate(int fd)
{
	char c;
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "a"(0L), "D"((long)fd), "S"(&c), "d"(1L)
			 : "rcx", "r11", "memory");
	calls_gate++;
	return r + 100;
}

static void *gatekeeper(void *arg)
{
	(void)arg;
	long r;
	gatetid = syscall(SYS_gettid);
	do
		r = gate(pipefd[0]);
	while (r == 100 - 4); /* EINTR: call again */
	printf("gate: %ld\n", r);
	return NULL;
}

/* in_read reports whether the gatekeeper thread is blocked in its read
 * of fd, as proc(5)'s /proc/PID/task/TID/syscall shows it: the system call
 * number (0, read) and its first argument. */
static int in_read(int fd)
{
	char path[64], buf[256], want[32];
	long tid = gatetid;
	if (tid == 0)
		return 0;
	snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int ok = fgets(buf, sizeof buf, f) != NULL;
	fclose(f);
	snprintf(want, sizeof want, "0 0x%x ", fd);
	return ok && strncmp(buf, want, strlen(want)) == 0;
}

static void wait_line(const char *say)
{
	char buf[64];
	printf("%s\n", say);
	fflush(stdout);
	if (!fgets(buf, sizeof buf, stdin))
		exit(9);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "handler";
	int hold = argc > 2 && strcmp(argv[2], "hold") == 0;
	pthread_t th[K];
	if (strcmp(mode, "handler") == 0) {
		sem_init(&release, 0, 0);
		signal(SIGUSR1, onusr1);
		for (int k = 0; k < K; k++)
			pthread_create(&th[k], NULL, spinner, NULL);
		while (spinning < K)
			usleep(1000);
		for (int k = 0; k < K; k++)
			pthread_kill(th[k], SIGUSR1);
		while (parked < K)
			usleep(1000);
		wait_line("ready");
		spin(&one); /* the first call since the attach */
		if (hold)
			wait_line("held");
		go = 1;
		for (int k = 0; k < K; k++)
			sem_post(&release);
		for (int k = 0; k < K; k++)
			pthread_join(th[k], NULL);
		printf("spin called %ld times, %d parked\n", calls_spin, parked);
	} else if (strcmp(mode, "coro") == 0) {
		for (int k = 0; k < K; k++) {
			getcontext(&coro_ctx[k]);
			coro_ctx[k].uc_stack.ss_sp = coro_stack[k];
			coro_ctx[k].uc_stack.ss_size = sizeof coro_stack[k];
			coro_ctx[k].uc_link = &main_ctx;
			makecontext(&coro_ctx[k], (void (*)(void))coro, 1, k);
			swapcontext(&main_ctx, &coro_ctx[k]);
		}
		wait_line("ready");
		printf("main: %d\n", park(-1, 7)); /* the first call since the attach */
		if (hold)
			wait_line("held");
		for (int k = 0; k < K; k++)
			swapcontext(&main_ctx, &coro_ctx[k]);
		printf("park called %ld times\n", calls_park);
	} else if (strcmp(mode, "first") == 0) {
		if (pipe(pipefd) != 0)
			return 1;
		pthread_create(&th[0], NULL, gatekeeper, NULL);
		while (!in_read(pipefd[0]))
			usleep(1000);
		wait_line("ready");
		int p2[2];
		if (pipe(p2) != 0 || write(p2[1], "x", 1) != 1)
			return 1;
		printf("main gate: %ld\n", gate(p2[0])); /* the first call since the attach */
		if (hold)
			wait_line("held");
		if (write(pipefd[1], "y", 1) != 1)
			return 1;
		pthread_join(th[0], NULL);
		printf("gate called %ld times\n", calls_gate);
	} else {
		return 2;
	}
	return 0;
}
