/*
 * vfork.c: the child of vfork execs /bin/echo at once; the parent waits for
 * it, then calls f 100 times.
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

	fflush(stdout);
	pid = vfork();
	if (pid < 0) {
		perror("vfork");
		return 1;
	}
	if (pid == 0) {
		execl("/bin/echo", "echo", "hello-from-exec", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("waitpid");
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("child failed: status 0x%x\n", status);
		return 1;
	}
	for (i = 0; i < 100; i++)
		f();
	printf("parent done\n");
	return 0;
}
