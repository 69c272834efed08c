/*
 * jumplife.c: the lifecycle of the in-process engine's counters. Three
 * forked children call f 100000 times each (the third kills itself with
 * SIGKILL after 50000); a vfork child execs /bin/true; the parent calls f
 * 1000 times and execs itself with "again", which calls f 7 times.
 * f is called 251007 times in all.
 *
 * With "gs", the parent calls f, forks a child that reads its GS base
 * (arch_prctl) and calls f, and prints whether the child's GS base was 0:
 * with --no-follow the child runs untraced, as it would without patchprof.
 */
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noipa)) long
f(long x)
{
	return x * 3 + 1;
}

static void
calls(long n)
{
	long i;

	for (i = 0; i < n; i++)
		sink += f(i);
}

int
main(int argc, char **argv)
{
	int k, st;
	pid_t pid;

	if (argc > 1 && strcmp(argv[1], "gs") == 0) {
		unsigned long gs = 1;

		calls(10);
		pid = fork();
		if (pid == 0) {
			syscall(SYS_arch_prctl, ARCH_GET_GS, &gs);
			calls(10);
			_exit(gs != 0);
		}
		waitpid(pid, &st, 0);
		printf("child gs %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "zero" : "set");
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "again") == 0) {
		calls(7);
		printf("again\n");
		return 0;
	}
	for (k = 0; k < 3; k++) {
		pid = fork();
		if (pid < 0)
			return 2;
		if (pid == 0) {
			long i;
			for (i = 0; i < 100000; i++) {
				sink += f(i);
				if (k == 2 && i == 49999)
					raise(SIGKILL);
			}
			_exit(0);
		}
		waitpid(pid, &st, 0);
		if (k == 2 ? !WIFSIGNALED(st) : !WIFEXITED(st))
			return 3;
	}
	pid = vfork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	calls(1000);
	fflush(stdout);
	execl("/proc/self/exe", argv[0], "again", (char *)NULL);
	return 4;
}
