/* A statically linked C program through glibc's IFUNC-selected string
 * functions (memcpy, mempcpy, strlen, memset, strchr), stdio and qsort:
 * under the in-process engine a jump patch at memcpy's entry must not
 * cover the address __mempcpy_* jumps to, one instruction in. Build with
 * -static (and -g for --lines). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int main(int argc, char **argv)
{
	char buf[256], out[256];
	int v[64];
	int i;

	puts("hello");
	for (i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	qsort(v, 64, sizeof v[0], cmp);
	memset(buf, 'x', sizeof buf);
	buf[100] = 0;
	for (i = 0; i < 10; i++) {
		char *e = mempcpy(out, buf, (size_t)(i * 10));
		*e = 0;
		printf("%d %zu %d\n", i, strlen(out), strchr(out, 'y') == NULL);
	}
	printf("%s %d %d\n", argv[0] ? "argv" : "none", v[0], v[63]);
	return argc + 4;
}
