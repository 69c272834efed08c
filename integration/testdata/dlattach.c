/* dlattach: a target for an attach that must not stop at system calls.
 * It blocks SIGTRAP and ignores it (so a forced SIGTRAP would change
 * both), prints "ready", then serves commands on stdin:
 *   "N"     call work() N times, each after a write(2) to /dev/null;
 *           answer "done N TOTAL"
 *   "load"  dlopen PLUGIN (argv[1]), call its plug() 100 times, dlclose
 *           it; answer "loaded SUM"
 *   "fork"  fork a child that does what "load" does and exits 0 when its
 *           sum is right; answer "forked exited=E" (its exit status) or
 *           "forked stopped" (it stopped instead: it is then killed)
 *   "state" answer "trap blocked=B ignored=I": SIGTRAP's state as seen now
 * and exits 0 at end of input. */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long total;
static int devnull;

void work(void)
{
	total++;
	if (write(devnull, "x", 1) != 1)
		exit(4);
}

static int load(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);
	if (h == NULL) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		exit(5);
	}
	int (*plug)(int) = (int (*)(int))dlsym(h, "plug");
	int sum = 0;
	for (int k = 0; k < 100; k++)
		sum += plug(k);
	dlclose(h);
	return sum;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: dlattach PLUGIN\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	devnull = open("/dev/null", O_WRONLY);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTRAP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGTRAP, SIG_IGN);
	printf("ready\n");
	char line[64];
	while (fgets(line, sizeof line, stdin) != NULL) {
		if (strncmp(line, "fork", 4) == 0) {
			pid_t c = fork();
			if (c == 0)
				_exit(load(argv[1]) == 9900 ? 0 : 1);
			int st;
			if (waitpid(c, &st, WUNTRACED) != c)
				return 6;
			if (WIFSTOPPED(st)) {
				kill(c, SIGKILL);
				waitpid(c, &st, 0);
				printf("forked stopped\n");
			} else {
				printf("forked exited=%d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			}
		} else if (strncmp(line, "load", 4) == 0) {
			printf("loaded %d\n", load(argv[1]));
		} else if (strncmp(line, "state", 5) == 0) {
			sigset_t now;
			struct sigaction sa;
			sigprocmask(SIG_BLOCK, NULL, &now);
			sigaction(SIGTRAP, NULL, &sa);
			printf("trap blocked=%d ignored=%d\n", sigismember(&now, SIGTRAP), sa.sa_handler == SIG_IGN);
		} else {
			long n = atol(line);
			for (long k = 0; k < n; k++)
				work();
			printf("done %ld %ld\n", n, total);
		}
	}
	return 0;
}
