/*
 * cgoto.c: a small stack-machine interpreter dispatched by GNU C computed
 * goto (labels as values): a static table of label addresses, goto
 * *disp[op], a loop in the bytecode, a label nothing dispatches to (only
 * reached by falling through) and a label both dispatched to and fallen
 * into. resume jumps through a label address held in a variable. The
 * counts of the marked lines are known by construction: main runs the
 * program summing 1..10 three times, then resume(7).
 */
#include <stdio.h>
#include <stdlib.h>

enum { PUSH, ADD, DEC, DUP, OVER, SWAP, JNZ, DROP, HALT, NOP };

static long stack[64];

__attribute__((noipa)) long
run(const unsigned char *code)
{
	static void *disp[] = { &&op_push, &&op_add, &&op_dec, &&op_dup,
				&&op_over, &&op_swap, &&op_jnz, &&op_drop,
				&&op_halt, &&op_nop };
	int sp = 0, pc = 0;
	long steps = 0;

	goto *disp[code[pc++]];
op_push:
	stack[sp++] = code[pc++]; /* PUSH_BODY */
	goto *disp[code[pc++]];
op_add:
	sp--;
	stack[sp - 1] += stack[sp]; /* ADD_BODY */
	goto *disp[code[pc++]];
op_dec:
	stack[sp - 1]--;
	goto *disp[code[pc++]];
op_over:
	stack[sp] = stack[sp - 2]; /* OVER_BODY */
	sp++;
	goto *disp[code[pc++]];
op_dup:
	stack[sp] = stack[sp - 1];
	sp++;
	/* falls through to a label nothing dispatches to */
count:
	steps++; /* COUNT_BODY */
	goto *disp[code[pc++]];
op_swap:
	{
		long t = stack[sp - 1];
		stack[sp - 1] = stack[sp - 2];
		stack[sp - 2] = t;
	}
	goto *disp[code[pc++]];
op_jnz:
	if (stack[--sp] != 0) /* JNZ_TEST */
		pc = code[pc]; /* JNZ_TAKEN */
	else
		pc++; /* JNZ_NOT */
	goto *disp[code[pc++]];
op_drop:
	sp--;
	/* falls through into a label the table names too */
op_nop:
	steps++; /* NOP_BODY */
	goto *disp[code[pc++]];
op_halt:
	return stack[sp - 1] + 0 * steps;
}

/* resume keeps where to go next in a variable: a two-phase counter that
 * runs n >= 1 steps. */
__attribute__((noipa)) long
resume(int n)
{
	void *next = &&even;
	long odd_seen = 0, even_seen = 0;
	int i = 0;

	goto *next;
even:
	even_seen++; /* EVEN_BODY */
	next = &&odd;
	if (++i < n)
		goto *next;
	return even_seen * 1000 + odd_seen;
odd:
	odd_seen++; /* ODD_BODY */
	next = &&even;
	if (++i < n)
		goto *next;
	return even_seen * 1000 + odd_seen;
}

int
main(void)
{
	/* sum(1..n) on the stack [n s]; prog[1] is n. */
	static const unsigned char prog[] = {
		PUSH, 10,	/*  0: [n] */
		PUSH, 0,	/*  2: [n 0] */
		NOP,		/*  4 */
		OVER,		/*  5: loop: [n s n] */
		ADD,		/*  6: [n s+n] */
		SWAP,		/*  7: [s n] */
		DEC,		/*  8: [s n-1] */
		DUP,		/*  9: [s n-1 n-1] */
		JNZ, 15,	/* 10: [s n-1] */
		DROP,		/* 12: [s] */
		HALT,		/* 13 */
		NOP,		/* 14 */
		SWAP,		/* 15: [n-1 s] */
		PUSH, 1,	/* 16 */
		JNZ, 5,		/* 18: always taken */
	};
	long total = 0;
	int k;

	for (k = 0; k < 3; k++)
		total += run(prog);
	printf("run %ld resume %ld\n", total, resume(7));
	return 0;
}
