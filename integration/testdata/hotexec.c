/* A program that runs itself again, as a test suite runs one program many
 * times: hotexec K does its work (six functions, each called a known
 * number of times), then, for K > 0, runs hotexec K-1 as a child (fork,
 * exec) and waits for it. hotexec 9 is ten processes of one program, one
 * after another; each prints its work's sum. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) static void one(long x) { sink += x; }
__attribute__((noinline)) static void two(long x) { sink ^= x; one(x); }
__attribute__((noinline)) static void three(long x) { if (x & 1) two(x); else one(x); }
__attribute__((noinline)) static long four(long x) { return x * 3 + 1; }
__attribute__((noinline)) static void five(long n) { for (long i = 0; i < n; i++) three(four(i)); }
__attribute__((noinline)) static long six(void) { return sink; }

int main(int argc, char **argv)
{
	long k = argc > 1 ? atol(argv[1]) : 0;
	five(1000);
	printf("hotexec %ld %ld\n", k, six());
	fflush(stdout);
	if (k <= 0)
		return 0;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		char arg[32];
		snprintf(arg, sizeof arg, "%ld", k - 1);
		execl("/proc/self/exe", argv[0], arg, (char *)NULL);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 1;
	return WEXITSTATUS(status);
}
