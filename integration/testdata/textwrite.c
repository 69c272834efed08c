// textwrite rewrites its own code after running it: it makes the page of
// scale writable with mprotect, finds the 32-bit constant in scale's body
// and replaces it, makes the page executable again and calls scale anew.
// This is what a hot-patcher or a self-modifying program does.
//
// scale is alone in its page (page-aligned section, a page-aligned end
// marker after it). Usage: textwrite N.
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096
#define OLD 0x12345
#define NEW 0x23456

__attribute__((section(".text.textwrite"), aligned(PAGE), noinline)) int scale(int x) {
	int y = x + OLD; // SCALE_BODY
	return y;
}

__attribute__((section(".text.textwrite"), aligned(PAGE), noinline)) void scale_end(void) {}

int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 1000;
	unsigned char *page = (unsigned char *)scale;
	if ((unsigned char *)scale_end - page != PAGE) {
		fprintf(stderr, "textwrite: scale is not alone in its page\n");
		return 2;
	}
	long sum = 0;
	for (long i = 0; i < n; i++)
		sum += scale((int)i);
	printf("before %ld\n", sum);
	fflush(stdout);
	if (mprotect(page, PAGE, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
		perror("mprotect");
		return 1;
	}
	int32_t old = OLD, new = NEW;
	int found = 0;
	for (int k = 0; k + 4 <= PAGE; k++) {
		if (memcmp(page + k, &old, 4) == 0) {
			memcpy(page + k, &new, 4);
			found++;
		}
	}
	if (mprotect(page, PAGE, PROT_READ | PROT_EXEC) != 0) {
		perror("mprotect");
		return 1;
	}
	printf("rewrote %d\n", found);
	sum = 0;
	for (long i = 0; i < n; i++)
		sum += scale((int)i);
	printf("after %ld\n", sum);
	return 0;
}
