/* pingpong.c: a process that execs without end. Built twice, once with
 * -DPONG (more code before main, so that the two programs' functions are
 * at other addresses), each copy spins about a millisecond, then execs the
 * program argv[1] with its own path as the next argument: ping, pong,
 * ping, ... in one process. An attach almost always finds it running
 * another program than the one whose file it read first. */
#include <unistd.h>

#ifdef PONG
__attribute__((noinline)) long pad1(long x) { return x * 3 + 1; }
__attribute__((noinline)) long pad2(long x) { return pad1(x) ^ (x >> 3); }
__attribute__((noinline)) long pad3(long x) { return pad2(x) + pad1(x - 1); }
#endif

__attribute__((noinline)) long spin(long n)
{
	volatile long x = 0;
	for (long i = 0; i < n; i++)
		x += i;
	return x;
}

int main(int argc, char **argv)
{
	char *next[3] = {argv[1], argv[0], 0};
#ifdef PONG
	spin(pad3(100000));
#else
	spin(300000);
#endif
	execv(argv[1], next);
	return 1;
}
