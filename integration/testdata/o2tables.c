/* The shapes gcc -O2 gives the indirect jumps of an interpreter's
 * functions (Jim Tcl's list quoting, lsort and expression evaluation),
 * with counts known by construction (main):
 *
 *   quoting: a switch on a character in a scanning loop, its table's
 *     address loaded into a callee-saved register before the outer loop,
 *     many blocks before the jump;
 *   sortby: a switch on a structure's field, compared in memory, with
 *     spills to the stack between the compare and its branch, and the
 *     field read again for the jump;
 *   evalnode: a tail call through a handler in an array of structures,
 *     beside a switch of its own.
 *
 * Each case calls a function of its own, so that gcc merges no two and
 * --funcs counts each case. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

long notes, sum;

__attribute__((noipa)) void note(int k) { notes += k; }
__attribute__((noipa)) void on_a(void) { sum += 1; }
__attribute__((noipa)) void on_b(void) { sum += 2; }
__attribute__((noipa)) void on_c(void) { sum += 3; }
__attribute__((noipa)) void on_d(void) { sum += 4; }
__attribute__((noipa)) void on_e(void) { sum += 5; }
__attribute__((noipa)) void on_f(void) { sum += 6; }
__attribute__((noipa)) void on_g(void) { sum += 7; }
__attribute__((noipa)) void on_h(void) { sum += 8; }

/* Twenty tests before the switch: the table's address is loaded further
 * back than a bounded search of predecessors reaches. */
#define NOTE(k) if (ch == (k) + len) note(k);
#define NOTES NOTE(1) NOTE(2) NOTE(3) NOTE(4) NOTE(5) NOTE(6) NOTE(7) NOTE(8) NOTE(9) NOTE(10) \
	NOTE(11) NOTE(12) NOTE(13) NOTE(14) NOTE(15) NOTE(16) NOTE(17) NOTE(18) NOTE(19) NOTE(20)

__attribute__((noipa)) long quoting(const char **v, int n)
{
	long other = 0;
	for (int i = 0; i < n; i++) {
		const char *s = v[i];
		int len = 0;
		while (s[len])
			len++;
		for (int j = 0; j < len; j++) {
			int ch = (unsigned char)s[j];
			NOTES
			switch (s[j]) {
			case 'a': on_a(); break;
			case 'b': on_b(); break;
			case 'c': on_c(); break;
			case 'd': on_d(); break;
			case 'e': on_e(); break;
			case 'f': on_f(); break;
			case 'g': on_g(); break;
			case 'h': on_h(); break;
			default: other++; break;
			}
		}
	}
	return other;
}

struct info { int type; int order; jmp_buf jb; };
struct list { long *ele; int len; };
static struct info *cur;

__attribute__((noipa)) long by_int(long a, long b) { return a - b; }
__attribute__((noipa)) long by_rev(long a, long b) { return b - a; }
__attribute__((noipa)) long by_abs(long a, long b) { return labs(a) - labs(b); }
__attribute__((noipa)) long by_odd(long a, long b) { return (a & 1) - (b & 1); }
__attribute__((noipa)) long by_none(long a, long b) { return a * 0 + b * 0; }
__attribute__((noipa)) void prepare(long *v, int n) { sum += v[0] + n; }

__attribute__((noipa)) long sortby(struct list *l, struct info *info)
{
	struct info *prev;
	long (*fn)(long, long);
	long *v;
	long s = 0;
	int n;
	prev = cur;
	cur = info;
	prepare(l->ele, l->len);
	v = l->ele;
	n = l->len;
	switch (info->type) {
	case 0: fn = by_int; break;
	case 1: fn = by_rev; break;
	case 2: fn = by_abs; break;
	case 3: fn = by_odd; break;
	case 4: fn = by_none; break;
	default: abort();
	}
	if (setjmp(info->jb) != 0) {
		cur = prev;
		return -1;
	}
	for (int i = 1; i < n; i++)
		s += fn(v[i - 1], v[i]) > 0;
	cur = prev;
	return s;
}

struct node { int type; long a, b; };
typedef long opfn(struct node *);
struct op { const char *name; opfn *fn; int prec; };
__attribute__((noipa)) long op_add(struct node *n) { return n->a + n->b; }
__attribute__((noipa)) long op_sub(struct node *n) { return n->a - n->b; }
__attribute__((noipa)) long op_mul(struct node *n) { return n->a * n->b; }
static const struct op ops[] = { { "+", op_add, 1 }, { "-", op_sub, 1 }, { "*", op_mul, 2 } };

__attribute__((noipa)) long evalnode(struct node *n)
{
	if (n->type >= 20)
		return ops[n->type - 20].fn(n);
	switch (n->type) {
	case 0: sum += 1; return n->a;
	case 1: sum += 2; return n->b;
	case 2: sum += 3; return -n->a;
	case 3: sum += 4; return n->a ? n->b : 0;
	case 4: sum += 5; return 7;
	case 5: sum += 6; return n->a << 1;
	default: return 0;
	}
}

int main(void)
{
	/* quoting: 'a' once, 'b' twice ... 'h' eight times; four others. */
	static const char *words[] = { "abxh", "bcccx", "ddddh", "eeeeeh", "ffffffh", "gggggggh", "hhhyz" };
	long v[] = { 3, -1, 4 };
	struct list l = { v, 3 };
	struct info info = { 0 };
	long r = quoting(words, 7);
	/* sortby: type k (k + 1) times, each comparing twice. */
	for (int k = 0; k < 5; k++) {
		info.type = k;
		for (int i = 0; i <= k; i++)
			r += sortby(&l, &info);
	}
	/* evalnode: the handlers 3, 5 and 7 times, the switch's case k
	 * (k + 1) times, the default once. */
	for (int t = 0; t < 3; t++) {
		struct node op = { 20 + t, 6, 3 };
		for (int i = 0; i < 3 + 2 * t; i++)
			r += evalnode(&op);
	}
	for (int t = 0; t < 6; t++) {
		struct node c = { t, 2, 5 };
		for (int i = 0; i <= t; i++)
			r += evalnode(&c);
	}
	struct node d = { 9, 1, 1 };
	r += evalnode(&d);
	printf("r %ld sum %ld notes %ld\n", r, sum, notes);
	return 0;
}
