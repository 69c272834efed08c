// owngs uses its own GS base, as patchprof's in-process counters do:
// "owngs HOW WHEN". HOW: arch_prctl (ARCH_SET_GS) or wrgsbase (where the
// kernel enabled FSGSBASE; else it prints "nofsgsbase" and ends). WHEN:
// after (f 10 times, then the GS base set, then f 1000 times and g 10),
// attach (set, then "ready"; each line n on stdin calls f n times and
// answers "done n total"), late (the same, the GS base set only when a
// line "gs" comes, answered "gs set"). It then reads its GS area back through %gs:
// anything a trampoline added there shows in gs_read_sum, 0 natively.
// Build: gcc -g -O0.
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#define AREA (1 << 16)
static uint64_t area[AREA / 8];
static long nf, ng;

__attribute__((noinline)) void f(void) { nf++; }
__attribute__((noinline)) void g(void) { ng++; }

static void setgs(const char *how, void *p) {
	if (strcmp(how, "wrgsbase") == 0) {
		__asm__ volatile("wrgsbase %0" ::"r"(p) : "memory");
		return;
	}
	if (syscall(SYS_arch_prctl, ARCH_SET_GS, p) != 0) {
		perror("arch_prctl");
		exit(2);
	}
}

static uint64_t gsSum(void) {
	uint64_t s = 0;
	for (long k = 0; k < AREA / 8; k++) {
		uint64_t v;
		__asm__ volatile("movq %%gs:(%1), %0" : "=r"(v) : "r"(k * 8));
		s += v;
	}
	return s;
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: owngs arch_prctl|wrgsbase after|attach|late\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(argv[1], "wrgsbase") == 0 && !(getauxval(AT_HWCAP2) & 2)) {
		printf("nofsgsbase\n");
		return 0;
	}
	if (strcmp(argv[2], "after") == 0) {
		for (int k = 0; k < 10; k++)
			f();
		setgs(argv[1], area);
		for (int k = 0; k < 1000; k++)
			f();
		for (int k = 0; k < 10; k++)
			g();
		printf("f=%ld g=%ld gs_read_sum=%llu\n", nf, ng, (unsigned long long)gsSum());
		return 0;
	}
	if (strcmp(argv[2], "late") != 0)
		setgs(argv[1], area);
	printf("ready\n");
	long total = 0;
	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		if (strncmp(line, "gs", 2) == 0) {
			setgs(argv[1], area);
			printf("gs set\n");
			continue;
		}
		long n = atol(line);
		for (long k = 0; k < n; k++)
			f();
		g();
		total += n;
		printf("done %ld %ld\n", n, total);
	}
	printf("bye %ld %ld gs_read_sum=%llu\n", nf, ng, (unsigned long long)gsSum());
	return 0;
}
