/* Loop shapes for the gcov oracle (integration/gcovshapes_test.go): every
 * count is known by construction. Build: gcc -g -O0 loops.c */
#include <stdio.h>

static long sum;

static int while_break(int n)
{
	int i = 0;
	while (1) {
		if (i == n)
			break;
		sum += i; /* WHILE_BREAK_BODY */
		i++;
	}
	return i;
}

static int while_return(int n)
{
	int i = 0;
	while (1) {
		if (i == n)
			return i;
		sum += i; /* WHILE_RETURN_BODY */
		i++;
	}
}

static int for_break(int n)
{
	int i = 0;
	for (;;) {
		i++;
		if (i >= n)
			break;
	}
	return i;
}

static int for_return(int n)
{
	int i;
	for (i = 0;; i++) {
		if (i == n)
			return i;
		sum += i; /* FOR_RETURN_BODY */
	}
}

static int do_while(int n)
{
	int i = 0;
	do {
		sum += i; /* DO_BODY */
	} while (++i < n);
	return i;
}

static int const_true(int n)
{
	int i = 0;
	while (1 == 1) {
		if (++i == n)
			break;
	}
	return i;
}

static int goto_loop(int n)
{
	int i = 0;
again:
	sum += i; /* GOTO_BODY */
	if (++i < n)
		goto again;
	return i;
}

static int one_line(int n)
{
	int i, s = 0;
	for (i = 0; i < n; i++) s += i; /* ONE_LINE */
	return s;
}

static int nested_one_line(int n)
{
	int i, j, s = 0;
	for (i = 0; i < n; i++) for (j = 0; j < n; j++) s += i * j; /* NESTED_ONE_LINE */
	return s;
}

static int empty_body(const int *v, int n, int x)
{
	int i = 0;
	while (i < n && v[i] != x) i++;
	return i;
}

int main(void)
{
	int v[100], i, r = 0;
	for (i = 0; i < 100; i++)
		v[i] = 3 * i; /* FILL_BODY */
	r += while_break(7);
	r += while_return(13);
	r += for_break(7);
	r += for_return(13);
	r += do_while(7);
	r += const_true(13);
	r += goto_loop(13);
	r += one_line(100);
	r += nested_one_line(7);
	r += empty_body(v, 100, 3 * 42);
	printf("r %d sum %ld\n", r, sum);
	return 0;
}
