/* Calls work() only when told: each line "N" on stdin makes two threads call
 * work() N times in total; the program answers "done N TOTAL" with its own
 * count of calls so far. A line "exec PATH" makes it exec PATH (another
 * program, whose stdin and stdout are this one's). Exits 0 at end of
 * input. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long total;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) void work(void)
{
	pthread_mutex_lock(&mu);
	total++;
	pthread_mutex_unlock(&mu);
}

static void *run(void *a)
{
	long n = (long)a;
	for (long i = 0; i < n; i++)
		work();
	return 0;
}

int main(void)
{
	char line[4096];
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof line, stdin)) {
		if (strncmp(line, "exec ", 5) == 0) {
			char *argv[2] = {line + 5, 0};
			line[strcspn(line, "\n")] = 0;
			execv(argv[0], argv);
			perror("execv");
			return 1;
		}
		long n = atol(line);
		pthread_t t[2];
		pthread_create(&t[0], 0, run, (void *)(n / 2));
		pthread_create(&t[1], 0, run, (void *)(n - n / 2));
		pthread_join(t[0], 0);
		pthread_join(t[1], 0);
		printf("done %ld %ld\n", n, total);
		fflush(stdout);
	}
	return 0;
}
