/*
 * fork.c: the child calls f 300 times and exits 0; the parent waits for it,
 * then calls f 200 times. f runs 500 times in all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noipa)) void
f(void)
{
	sink++; /* F_BODY */
}

int
main(void)
{
	int i, status;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		for (i = 0; i < 300; i++)
			f();
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("child failed: status 0x%x\n", status);
		return 1;
	}
	for (i = 0; i < 200; i++)
		f();
	printf("parent done\n");
	return 0;
}
