/* A pre-forking server, as Apache's prefork or a unicorn: the parent listens
 * on a loopback port (printed as "port N"), forks WORKERS workers that accept
 * on the shared socket, and replaces each worker after it has served
 * PER_WORKER requests (it exits 0). A request is a line; the answer is
 * "ok PID SERVED" with the worker's PID and its own count of requests.
 * handle() runs once per request served. SIGTERM to the parent ends the
 * workers and then the parent, exit 0, saying how many it replaced. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define WORKERS 4

static int per_worker = 10;

__attribute__((noinline)) int handle(int fd, long served)
{
	char buf[128];
	ssize_t n = read(fd, buf, sizeof buf);
	if (n <= 0)
		return -1;
	int len = snprintf(buf, sizeof buf, "ok %d %ld\n", (int)getpid(), served);
	return write(fd, buf, len) == len ? 0 : -1;
}

/* worker serves per_worker requests and exits 0. The parent's signal mask
 * (SIGTERM and SIGCHLD blocked, for its sigwait) is not a worker's. */
static void worker(int ls)
{
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, 0);
	long served = 0;
	while (served < per_worker) {
		int fd = accept(ls, 0, 0);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			_exit(2);
		}
		if (handle(fd, served + 1) == 0)
			served++;
		close(fd);
	}
	_exit(0);
}

static pid_t spawn(int ls)
{
	pid_t pid = fork();
	if (pid == 0)
		worker(ls);
	return pid;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		per_worker = atoi(argv[1]);
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof a;
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof a) || listen(ls, 64) ||
	    getsockname(ls, (struct sockaddr *)&a, &alen)) {
		perror("listen");
		return 1;
	}
	/* The parent takes SIGTERM and SIGCHLD with sigwait, never in a
	 * handler: a stop cannot fall between two steps of the loop, nor
	 * reach a worker just forked before it has its own mask. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, 0);
	pid_t kids[WORKERS];
	for (int i = 0; i < WORKERS; i++)
		kids[i] = spawn(ls);
	printf("port %d\n", ntohs(a.sin_port));
	fflush(stdout);
	long replaced = 0;
	for (;;) {
		int sig;
		if (sigwait(&set, &sig) != 0 || sig == SIGTERM)
			break;
		int st;
		pid_t pid;
		while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
			for (int i = 0; i < WORKERS; i++) {
				if (kids[i] != pid)
					continue;
				if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
					fprintf(stderr, "worker %d ended with status %#x\n", (int)pid, st);
					return 3;
				}
				kids[i] = spawn(ls);
				replaced++;
			}
		}
	}
	for (int i = 0; i < WORKERS; i++)
		kill(kids[i], SIGTERM);
	for (int i = 0; i < WORKERS; i++)
		waitpid(kids[i], 0, 0);
	fprintf(stderr, "replaced %ld workers\n", replaced);
	return 0;
}
