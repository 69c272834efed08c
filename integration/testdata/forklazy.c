/*
 * forklazy.c: work(N) runs in a forked child and in its parent, with N
 * given as the first argument. With "child-first" the child forks before
 * any call of work and runs it while the parent waits, then the parent
 * runs it; otherwise the parent runs it first, then forks, and the child
 * runs it while the parent waits. Each of work's loop lines runs 2N times
 * in all (ODD_BODY and EVEN_BODY N each), its entry twice.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noipa)) void
work(long n)
{
	long i;

	for (i = 0; i < n; i++) { /* LOOP */
		if (i & 1)
			sink += 3; /* ODD_BODY */
		else
			sink -= 1; /* EVEN_BODY */
	}
}

static int
child(long n)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		work(n);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("child failed\n");
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	int childFirst = argc > 2 && strcmp(argv[2], "child-first") == 0;

	if (childFirst) {
		if (child(n))
			return 1;
		work(n);
	} else {
		work(n);
		if (child(n))
			return 1;
	}
	printf("done\n");
	return 0;
}
