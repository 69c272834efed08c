/* goto labels on case labels, in a resumable state machine written as
 * bzip2's decompress.c writes one (a macro that opens each state with a
 * `case`), for the gcov oracle (integration/gcovshapes_test.go).
 * Build: gcc -g -O0 gotocase.c */
#include <stdio.h>

struct st {
	int state;
	const char *in;
	int got;
};

/* GET reads one byte of s->in into v, or returns 0 to be called again
 * at the same state when the input is out. */
#define GET(lab, v)                  \
	case lab: s->state = lab;    \
	while (1) {                  \
		if (*s->in != '\0') { \
			v = *s->in++;  \
			break;         \
		}                      \
		RETURN(0);             \
	}

/* RETURN leaves through the function's one exit. */
#define RETURN(r) { ret = r; goto out; };

/* step runs the machine from s->state: a header byte, then either a
 * trailer ('T' jumps to it) or a body byte. It returns 1 when done. */
static int step(struct st *s)
{
	int c, ret;
	switch (s->state) {
	case 0:
		GET(1, c);
		if (c == 'T')
			goto trailer;
		GET(2, c);
		s->got += c;
		return 1;

	trailer: /* MACRO_LABEL */

		GET(3, c); /* MACRO_CASE */
		s->got -= c;
		return 1;
	case 4:
		if (s->got > 1000)
			goto direct;
		s->got++;
		return 1;
	direct: /* DIRECT_LABEL */
	case 5: /* DIRECT_CASE */
		s->got--;
		return 1;
	case 6: {
	again: /* CASE_THEN_LABEL */
		s->got += 2;
		if (s->got < 6)
			goto again;
		return 1;
	}
	default:
		return 1;
	}
out:
	return ret;
}

/* small's switch is two compares, no table: its case after the user's
 * label is a block of its own all the same. */
static int small(int v)
{
	int r = 0;
	switch (v) {
	case 1:
		r = 10;
		if (v > 0)
			goto shared;
		r = 20;
	shared: /* CHAIN_LABEL */
	case 2: /* CHAIN_CASE */
		r++;
		break;
	}
	return r;
}

int main(void)
{
	const char *inputs[] = {"Tx", "ab", "T", "a", "", "Tyz"};
	int total = 0;
	for (int i = 0; i < 6; i++) {
		struct st s = {0, inputs[i], 0};
		while (!step(&s)) {
			s.in = "q"; /* resume where it stopped */
		}
		total += s.got;
	}
	for (int i = 0; i < 5; i++) {
		struct st s = {4 + (i & 1), "", i < 2 ? 2000 : 0};
		step(&s);
		total += s.got;
	}
	for (int i = 0; i < 7; i++)
		total += small(i % 3);
	for (int i = 0; i < 4; i++) {
		struct st s = {6, "", i};
		step(&s);
		total += s.got;
	}
	printf("%d\n", total);
	return 0;
}
