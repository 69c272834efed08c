/*
 * stdin.c: copies stdin to stdout in upper case, then prints its arguments,
 * PATCHPROF_TEST_VAR and its working directory, and exits with code 7.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	char cwd[4096];
	const char *v;
	int c, i;

	while ((c = getchar()) != EOF)
		putchar(toupper(c));
	for (i = 0; i < argc; i++)
		printf("argv[%d]=[%s]\n", i, i == 0 ? "-" : argv[i]);
	v = getenv("PATCHPROF_TEST_VAR");
	printf("env=[%s]\n", v ? v : "(unset)");
	if (getcwd(cwd, sizeof cwd) == NULL)
		return 1;
	printf("cwd=[%s]\n", cwd);
	return 7;
}
