// textmove moves the page of its own code that holds bump with mremap and
// calls bump at its new address: a JIT or a hot-patcher moving code.
//
// bump is alone in its page (page-aligned section, a page-aligned end
// marker after it) and position-independent (a leaf, no global), so the
// moved copy runs as the original. Usage: textmove N.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096

__attribute__((section(".text.textmove"), aligned(PAGE), noinline)) int bump(int x) {
	int y = x * 3; // BUMP_BODY
	return y + 1;
}

__attribute__((section(".text.textmove"), aligned(PAGE), noinline)) void bump_end(void) {}

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 1000;
	uintptr_t page = (uintptr_t)bump;
	if ((uintptr_t)bump_end - page != PAGE) {
		fprintf(stderr, "textmove: bump is not alone in its page\n");
		return 2;
	}
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += bump((int)i); // FIRST_CALLS
	printf("before %ld\n", sum);
	fflush(stdout);
	void *to = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (to == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	void *got = mremap((void *)page, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, to);
	if (got != to) {
		perror("mremap");
		return 1;
	}
	int (*moved)(int) = (int (*)(int))got;
	sum = 0;
	for (long i = 0; i < n; i++)
		sum += moved((int)i); // MOVED_CALLS
	printf("moved %ld\n", sum);
	// Back where it was, so that nothing else notices.
	if (mremap(got, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)page) != (void *)page) {
		perror("mremap back");
		return 1;
	}
	sum = 0;
	for (long i = 0; i < n; i++)
		sum += bump((int)i);
	printf("back %ld\n", sum);
	return 0;
}
