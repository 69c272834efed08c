/* killmid: a thread spins in a counted loop and dies in the middle of it.
 *
 *   killmid exit    main calls exit once the spinner is well under way: the
 *                   exit_group kills the spinner wherever it is
 *   killmid signal  main sends the spinner SIGTERM (tgkill): the process
 *                   dies of it (status 143), the spinner wherever it was
 *   killmid cancel  the spinner runs in PTHREAD_CANCEL_ASYNCHRONOUS and
 *                   main cancels it: glibc's handler of the cancellation
 *                   signal unwinds it from wherever it was; main joins it
 *                   and exits 0
 *   killmid fixed   the spinner runs exactly ROUNDS rounds, then blocks in
 *                   read(2); main exits once it sees it blocked there:
 *                   every count is known
 *
 * Build: gcc -g -O0 -pthread killmid.c
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ROUNDS 100000

static volatile unsigned long spins, odd, even;
static volatile pid_t spinner_tid;
static int fixed, cancel;
static int never[2]; /* a pipe nobody writes to */
static int done[2];  /* the spinner's word that it ran ROUNDS rounds */

static void *spinner(void *arg)
{
	unsigned long i = 0;
	(void)arg;
	spinner_tid = (pid_t)syscall(SYS_gettid);
	if (cancel)
		pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	for (;;) {
		i++;                       /* BODY_I */
		if (i & 1)                 /* BODY_IF */
			odd++;             /* BODY_ODD */
		else
			even++;            /* BODY_EVEN */
		spins = i;                 /* BODY_SPINS */
		if (fixed && i == ROUNDS) { /* BODY_DONE */
			char c = 'd';
			write(done[1], &c, 1);
			read(never[0], &c, 1);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "exit";
	pthread_t th;
	fixed = strcmp(mode, "fixed") == 0;
	cancel = strcmp(mode, "cancel") == 0;
	if (pipe(never) != 0 || pipe(done) != 0)
		return 1;
	pthread_create(&th, NULL, spinner, NULL);
	if (fixed) {
		char c, path[64];
		if (read(done[0], &c, 1) != 1)
			return 1;
		/* Wait until the spinner is blocked in read(2) on never[0], as
		 * /proc/self/task/TID/syscall shows ("0 0xFD ..."). The POLL
		 * lines' counts vary from run to run. */
		snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)spinner_tid);
		for (;;) {                                                   /* POLL */
			FILE *f = fopen(path, "r");                          /* POLL */
			long nr = -1;                                        /* POLL */
			unsigned long fd = 0;                                /* POLL */
			if (f && fscanf(f, "%ld 0x%lx", &nr, &fd) != 2)      /* POLL */
				nr = -1;                                     /* POLL */
			if (f)                                               /* POLL */
				fclose(f);                                   /* POLL */
			if (nr == 0 && fd == (unsigned long)never[0])        /* POLL */
				break;                                       /* POLL */
			usleep(1000);                                        /* POLL */
		}                                                            /* POLL */
	}
	while (spins < 200000 && !fixed)
		usleep(1000);
	if (cancel) {
		pthread_cancel(th);
		pthread_join(th, NULL);
	}
	if (strcmp(mode, "signal") == 0) {
		syscall(SYS_tgkill, getpid(), spinner_tid, SIGTERM);
		for (;;)
			pause();
	}
	printf("spun %s\n", fixed ? "100000" : "enough");
	fflush(stdout);
	exit(0);
}
