// textplug loads a library with dlopen, calls its plug function, and
// unloads it with dlclose (whose munmap takes the library's code away),
// once per line read on stdin: "cycle". It prints "ready PID" first, and
// after each cycle "plug N" (the library's own count of its calls in that
// load) and "closed". It exits 0 at the end of its input.
//
// Usage: textplug LIBRARY N.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: textplug LIBRARY N\n");
		return 2;
	}
	long n = atol(argv[2]);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		if (strncmp(line, "cycle", 5) != 0)
			continue;
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "textplug: %s\n", dlerror());
			return 1;
		}
		int (*plug)(int) = (int (*)(int))dlsym(h, "plug");
		int (*calls)(void) = (int (*)(void))dlsym(h, "plug_calls");
		if (!plug || !calls) {
			fprintf(stderr, "textplug: %s\n", dlerror());
			return 1;
		}
		long sum = 0;
		for (long i = 0; i < n; i++)
			sum += plug((int)i);
		printf("plug %d sum %ld\n", calls(), sum);
		fflush(stdout);
		if (dlclose(h) != 0) {
			fprintf(stderr, "textplug: %s\n", dlerror());
			return 1;
		}
		printf("closed\n");
		fflush(stdout);
	}
	return 0;
}
