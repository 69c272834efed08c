/* Exits with status argv[1]; given "kill N", kills itself with signal N.
 * Without arguments it exits 0. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "kill") == 0) {
		int sig = atoi(argv[2]);
		signal(sig, SIG_DFL);
		raise(sig);
	}
	return argc > 1 ? atoi(argv[1]) : 0;
}
