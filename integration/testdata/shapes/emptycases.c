/* Empty cases that share a jump-table entry's target with the default and
 * with the values no case names, as zlib's gz_open reads its mode string
 * and SQLite's VDBE skips OP_Permutation, for the gcov oracle
 * (integration/gcovshapes_test.go). gcov counts each case label's arc from
 * the switch; the machine code has one target for all of them.
 * Build: gcc -g -O0 emptycases.c */
#include <stdio.h>

#define OP_SKIP 5 /* an opcode whose case is empty */
#define HAVE_CLOEXEC 1

static int level, strategy, direct, binary, cloexec, exclusive;

/* mode reads a mode string as gz_open does, with cases inside
 * preprocessor conditionals, one compiled and one not. */
static int mode(const char *m)
{
	int rw = 0;
	while (*m) {
		if (*m >= '0' && *m <= '9')
			level = *m - '0';
		else
			switch (*m) {
			case 'r':
				rw = 1;
				break;
			case 'w':
				rw = 2;
				break;
			case '+':
				return -1;
			case 'b': /* EMPTY_B */
				break; /* EMPTY_B_BREAK */
#ifdef HAVE_CLOEXEC
			case 'e':
				cloexec = 1;
				break;
#endif
#ifdef NEVER_DEFINED
			case 'x':
				exclusive = 1;
				break;
#endif
			case 'f':
				strategy = 1;
				break;
			case 'h':
				strategy = 2;
				break;
			case 'T':
				direct = 1;
				break;
			default: /* MODE_DEFAULT */
				;
			}
		m++;
	}
	return rw;
}

/* run executes a program of opcodes as a VDBE does. */
static int run(const int *ops, int n)
{
	int acc = 0;
	for (int pc = 0; pc < n; pc++) {
		switch (ops[pc]) {
		case 1:
			acc += 1;
			break;
		case 2:
			acc *= 2;
			break;
		case 3:
			acc -= 3;
			break;
		case 4:
			acc += 4;
			break;
		case OP_SKIP: { /* SKIP_CASE */
			break; /* SKIP_BREAK */
		}
		case 6:
			acc ^= 6;
			break;
		case 8: /* EIGHT_CASE */
			break; /* EIGHT_BREAK */
		default: { /* RUN_DEFAULT */
			break;
		}
		}
	}
	return acc;
}

int main(void)
{
	static const char *modes[] = {"rb", "wb9", "r", "ab", "wbT", "bbx", "w6h", "rbe"};
	int sum = 0;
	for (int i = 0; i < 8; i++)
		sum += mode(modes[i]);
	int ops[40];
	for (int i = 0; i < 40; i++)
		ops[i] = i % 7 == 0 ? 5 : i % 10;
	sum += run(ops, 40);
	printf("%d %d %d %d %d %d %d\n", sum, level, strategy, direct, binary, cloexec, exclusive);
	return 0;
}
