/* A scope whose local's address is taken ends with clobbers, which GCC
 * copies once per destination of the jumps leaving it when it has two or
 * more ways out, its end falling through being one (tree-eh.cc,
 * lower_try_finally). Whether the end falls through is read from the
 * scope's last statement (gimple_seq_may_fallthru): each line checked
 * against gcov by TestShapesGcov. */
#include <stdio.h>

static int init(int *p, int v) { *p = v; return v; }
static int step(int *p) { return *p > 0 ? --*p : 0; }
static int g;

/* zlib's uncompress2: an early return, then a return over three lines
 * whose last arm reads like a statement that falls through. Every call
 * that gets there takes the first arm (step stops at 0). */
static int unc(int v)
{
	int st;
	int err;
	err = init(&st, v);
	if (err < 0) return err; /* EARLY_RETURN */
	do {
		err = step(&st);
	} while (err > 0);
	return err == 0 ? 7 :
	       err == 1 ? 8 :
	       err;
}

/* An inner scope that ends in `if (c)` then a return: it falls through. */
static int inner(int v)
{
	int r = 0;
	if (v) {
		int st;
		if (init(&st, v) < 0) return 1; /* INNER_RETURN */
		if (st > 2)
			return 3;
	}
	r = v;
	return r;
}

/* A void function ending in an if whose then branch falls through. */
static void tail(int v)
{
	int st;
	if (init(&st, v) < 0) return; /* TAIL_RETURN */
	if (st > 2)
		g++;
	else
		return;
}

/* Both arms of the last if return: the end does not fall through. */
static int both(int v)
{
	int st;
	if (init(&st, v) < 0) return 1; /* BOTH_RETURN */
	if (st > 2)
		return 2;
	else
		return 3;
}

int main(void)
{
	int s = 0;
	for (int i = -2; i < 5; i++) {
		s += unc(i) + inner(i) + both(i);
		tail(i);
	}
	printf("%d %d\n", s, g);
	return 0;
}
