/* Prints the effective user and group IDs it runs with. */
#include <stdio.h>
#include <unistd.h>

int main(void)
{
	printf("euid %d egid %d\n", (int)geteuid(), (int)getegid());
	return 0;
}
