/* Runs until killed: prints its pid, then calls tick() forever. */
#include <stdio.h>
#include <unistd.h>

__attribute__((noinline)) void tick(void)
{
	usleep(1000);
}

int main(void)
{
	printf("%d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		tick();
}
