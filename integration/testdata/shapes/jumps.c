/* setjmp/longjmp and goto, for the gcov oracle
 * (integration/gcovshapes_test.go). Build: gcc -g -O0 jumps.c */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;
static int depth;

static void leaf(int i)
{
	depth++;
	if (i % 3 == 0)
		longjmp(env, i + 1); /* LEAF_JUMP */
	depth--;
}

static void middle(int i)
{
	leaf(i);
	leaf(i + 1);
}

static int parse(const char *s)
{
	int n = 0;
	if (*s == '\0')
		goto empty;
	while (*s) {
		if (*s < '0' || *s > '9')
			goto bad;
		n = n * 10 + (*s++ - '0');
	}
	return n;
bad:
	return -1;
empty:
	return 0;
}

int main(void)
{
	static const char *in[] = {"12", "", "7x", "100", "x", "42", "9"};
	volatile int i, jumps = 0;
	int p = 0, k;
	for (i = 0; i < 13; i++) {
		if (setjmp(env) != 0) { /* SETJMP */
			jumps++; /* JUMPED */
			continue;
		}
		middle(i);
	}
	for (k = 0; k < 7; k++)
		p += parse(in[k]);
	printf("jumps %d depth %d parsed %d\n", jumps, depth, p);
	return 0;
}
