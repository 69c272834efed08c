/* Patterns of real projects' code (zlib, bzip2, cJSON) where gcov's line
 * counts follow GCC's graph, not the line table: each checked line by line
 * against gcov by TestShapesGcov. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void panic(const char *m) __attribute__((noreturn));
static void panic(const char *m)
{
	fprintf(stderr, "%s\n", m);
	exit(1);
}

static int f1(int x) { return x + 1; }
static int f2(int x) { return x + 2; }
static int f3(int x) { return x + 3; }

/* A multi-line || whose operands compare the result of strstr, a builtin
 * after which GCC ends no block (bzip2's progName checks). */
static int mode_of(const char *p)
{
	int mode = 0;
	if ( (strstr ( p, "unzip" ) != 0) ||
	     (strstr ( p, "UNZIP" ) != 0) )
		mode = 1;
	if ( (strstr ( p, "z2cat" ) != 0) ||
	     (strstr ( p, "Z2CAT" ) != 0) ||
	     (strstr ( p, "zcat" ) != 0)  ||
	     (strstr ( p, "ZCAT" ) != 0) )  {
		mode = 2; /* ZCAT_MODE */
	}
	return mode;
}

/* Two nested loops with no condition, sharing their head (bzip2's
 * fallbackQSort3); a break after a call that never returns. */
static int a[64];
static int part(int lo, int hi, int med)
{
	int unLo = lo, unHi = hi, n, t;
	while (1) {
		while (1) {
			if (unLo > unHi) break;
			n = a[unLo] - med;
			if (n == 0) {
				unLo++;
				continue;
			};
			if (n > 0) break;
			unLo++;
		}
		while (1) {
			if (unLo > unHi) break;
			n = a[unHi] - med;
			if (n < 0) break;
			unHi--;
		}
		if (unLo > unHi) break;
		t = a[unLo]; a[unLo] = a[unHi]; a[unHi] = t; unLo++; unHi--; /* SWAP */
	}
	return unLo;
}

static int pick(int m)
{
	switch (m) {
	case 1:
		return 10;
	case 2:
		return 20;
	default:
		panic("bad mode");
		break;
	}
	return 0;
}

/* A break after an if / else if / else chain (cJSON's minify), and a
 * switch GCC lowers to bit tests whose range check jumps past the
 * default's goto (cJSON's parse_number). */
static void skip(const char **p) { (*p)++; }
static int minify(const char *json)
{
	int k = 0;
	while (json[0] != '\0')
	{
		switch (json[0])
		{
			case ' ':
			case '\n':
				json++;
				break;

			case '/':
				if (json[1] == '/')
				{
					skip(&json);
				}
				else if (json[1] == '*')
				{
					skip(&json);
				} else {
					json++;
				}
				break; /* SLASH_BREAK */

			default:
				k++;
				json++;
		}
	}
	return k;
}

static int number(const char *s)
{
	int n = 0, dot = 0, i;
	for (i = 0; s[i]; i++)
	{
		switch (s[i])
		{
			case '0':
			case '1':
			case '2':
			case '3':
			case '4':
			case '5':
			case '6':
			case '7':
			case '8':
			case '9':
			case '+':
			case '-':
			case 'e':
			case 'E':
				n++;
				break;

			case '.':
				n++;
				dot = 1;
				break;

			default: /* NUMBER_DEFAULT */
				goto loop_end;
		}
	}
loop_end:
	return n + dot;
}

/* A conditional expression over lines whose arms call (zlib's deflate). */
static int arms(int i)
{
	int b;
	b = i % 3 == 0 ? f1(i) : /* ARMS_HEAD */
	    i % 3 == 1 ? f2(i) :
	    f3(i);
	return b;
}

/* A loop with no condition right after a case label that the case before
 * falls into (zlib's inflate, case DIST): the label shares the loop's head,
 * and the jmp back closes the loop on its first statement's line. */
#define PULLBYTE() do { if (have == 0) goto leave; have--; bits += 8; } while (0)
enum { LEN, DIST, DONE };
static int states(int have)
{
	int mode = LEN, bits = 0, n = 0, here;
	for (;;)
		switch (mode) {
		case LEN:
			n++;
			mode = DIST;
			/* fallthrough */
		case DIST:
			for (;;) {
				here = bits & 7; /* DIST_HEAD */
				if (here + 20 <= bits) break;
				PULLBYTE();
			}
			mode = n < 3 ? LEN : DONE;
			bits = 0;
			break;
		case DONE:
			goto leave;
		}
leave:
	return n + bits;
}

/* bzip2's unRLE_obuf_to_output_SMALL: two nested loops on a macro for a
 * constant (`while (True)`), GCC's loops with no condition; the outer
 * one's continues jump to its closing jmp. */
typedef unsigned char Bool;
#define True ((Bool)1)
struct rle { int avail, len, used, save, k0, ch; unsigned out; };
static const int runs[] = { 3, 3, 3, 5, 5, 7, 7, 7, 7, 7, 2, 2, 9, 9, 9 };
#define GET(c) { c = runs[s->used % 15]; }
static Bool unrle(struct rle *s)
{
	int k1;
	if (s->avail < 0)
		return 0;
	while (True) { /* OUTER_HEAD */
		while (True) {
			if (s->avail == 0) return 0;
			if (s->len == 0) break;
			s->out += s->ch;
			s->len--;
			s->avail--;
		}
		if (s->used == s->save + 1) return 0;
		if (s->used > s->save + 1)
			return 1;
		s->len = 1;
		s->ch = s->k0;
		GET(k1); s->used++;
		if (s->used == s->save + 1) continue;
		if (k1 != s->k0) { s->k0 = k1; continue; };
		s->len = 2;
		GET(k1); s->used++;
		if (s->used == s->save + 1) continue;
		if (k1 != s->k0) { s->k0 = k1; continue; };
		GET(k1); s->used++;
		s->len = k1 + 4;
		GET(s->k0); s->used++;
	}
}

int main(void)
{
	int s = 0;
	s += mode_of("./bzip2") + mode_of("./zcat") + mode_of("./unzip");
	for (int i = 0; i < 64; i++)
		a[i] = (i * 37) % 64;
	for (int k = 0; k < 5; k++)
		s += part(0, 63, 20 + k);
	s += pick(1) + pick(2);
	s += minify("a b/ /c//d/*x\ny");
	s += number("12.0e1x") + number("2") + number("x") + number("!");
	for (int i = 0; i < 9; i++)
		s += arms(i);
	s += states(100) + states(5);
	struct rle r = { 0, 0, 0, 40, 3, 0, 0 };
	for (int k = 0; k < 9; k++) {
		r.avail = 7;
		s += unrle(&r);
	}
	s += (int)r.out;
	printf("%d\n", s);
	return 0;
}
