/* writes: n small write(2)s to /dev/null, each after one call of a counted
 * function: the cost of a system call to a profiled program. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) long step(long s) { return s + 1; }

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 100000, s = 0;
	int fd = open("/dev/null", O_WRONLY);
	if (fd < 0) {
		perror("/dev/null");
		return 1;
	}
	for (long i = 0; i < n; i++) {
		s = step(s);
		if (write(fd, "x", 1) != 1) {
			perror("write");
			return 1;
		}
	}
	printf("%ld\n", s);
	return 0;
}
