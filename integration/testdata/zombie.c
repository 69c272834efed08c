/* Leaves a zombie: the child exits at once and the parent, without reaping
 * it, prints its PID and sleeps until stdin closes. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	printf("%d\n", (int)p);
	fflush(stdout);
	char c;
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
