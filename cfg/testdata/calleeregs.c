/* The cfg test's callee-register target (calleeregs_test.go), built with
   gcc -O2: unescape's switch sits in a loop, and one of its cases calls
   the static helper hex, which writes few registers; gcc allocates
   registers across the call (-fipa-ra) and keeps the jump table's base
   in a caller-saved register round the loop. */
#include <stdlib.h>

static __attribute__((noinline, noclone)) int hex(const char *p)
{
	int v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else
			return -1;
	}
	return v;
}

/* clobber writes %r10 and %r11 itself: no call to it keeps them. */
static __attribute__((noinline, noclone)) int clobber(int x)
{
	__asm__ volatile("movslq %0, %%r10\n\tmov %%r10, %%r11" : : "r"(x) : "r10", "r11");
	return x + 1;
}

/* walk calls itself: a recursion writes every register. */
struct node { int v; struct node *l, *r; };

static __attribute__((noinline, noclone)) int walk(const struct node *n)
{
	return n ? n->v + walk(n->l) * 3 + walk(n->r) : 0;
}

/* indirect calls through a pointer: it writes every register. */
static __attribute__((noinline, noclone)) int indirect(int (*f)(int), int x)
{
	return f(x) + 1;
}

struct hooks { void *(*alloc)(size_t); void (*release)(void *); };

/* unescape copies the n bytes at in to memory from h, undoing the
   escapes; NULL when one is bad. */
char *unescape(const struct hooks *h, const char *in, size_t n)
{
	const char *end = in + n;
	char *out = h->alloc(n + 1), *o = out;
	if (out == NULL)
		return NULL;
	while (in < end) {
		if (*in != '\\') {
			*o++ = *in++;
			continue;
		}
		unsigned char len = 2;
		switch (in[1]) {
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case '"': case '\\': case '/': *o++ = in[1]; break;
		case 'u': {
			int v = hex(in + 2);
			if (v < 0)
				goto fail;
			*o++ = (char)v;
			len = 6;
			break;
		}
		default:
			goto fail;
		}
		in += len;
	}
	*o = 0;
	return out;
fail:
	h->release(out);
	return NULL;
}

int main(int argc, char **argv)
{
	struct hooks h = {malloc, free};
	const char *in = argc > 1 ? argv[1] : "a\\nb\\u0041";
	char *out = unescape(&h, in, argc > 2 ? (size_t)atoi(argv[2]) : 10);
	int r = (out ? out[0] : 0) + clobber(argc) + walk(argc > 5 ? (const struct node *)argv : NULL) + indirect(clobber, argc) > 0 ? 0 : 1;
	free(out);
	return r;
}
