/* clonevm: a child made by clone(CLONE_VM | SIGCHLD), which shares its
 * parent's memory without being its thread, calls g 10 times; after it ends
 * the parent calls f 110 times. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

static volatile long sink;

void g(int i) { sink += i; }
void f(int i) { sink += i; }

static int child(void *arg)
{
	(void)arg;
	for (int i = 0; i < 10; i++)
		g(i);
	return 0;
}

int main(void)
{
	size_t size = 1 << 20;
	char *stack = malloc(size);
	int pid = clone(child, stack + size, CLONE_VM | SIGCHLD, NULL);
	if (pid < 0)
		return 1;
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 2;
	for (int i = 0; i < 110; i++)
		f(i);
	printf("sink %ld\n", sink);
	return 0;
}
