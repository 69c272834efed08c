// Patterns of a real C++ project's code (TinyXML-2) where gcov's line
// counts follow GCC's graph, not the line table: each checked line by
// line against gcov by TestShapesGcov.
#include <cstdarg>
#include <cstdio>
#include <cstring>

struct Entity {
	const char *pattern;
	int length;
	char value;
};
static const Entity entities[] = {{"amp", 3, '&'}, {"lt", 2, '<'}, {"gt", 2, '>'}};
static int processing = 1;

static const char *charRef(const char *p, char *buf, int *len)
{
	*len = 1;
	buf[0] = p[2];
	return p[2] == 'x' ? 0 : p + 3;
}

// StrPair::GetStr: the then block of an if whose condition is an && ends
// in a join (its last statement an if); the goto past the else is a
// statement of the block's closing brace, which every way through the
// branch runs through.
static void unescape(const char *p, char *q)
{
	while (*p) {
		if (*p == 'a') {
			++p;
		}
		else if (processing && *p == '&') {
			if (*(p + 1) == '#') {
				char buf[10] = {0};
				int len = 0;
				const char *adjusted = charRef(p, buf, &len);
				if (adjusted == 0) {
					*q = *p;
					++p;
					++q;
				}
				else {
					p = adjusted;
					memcpy(q, buf, len);
					q += len;
				}
			}
			else {
				bool found = false;
				for (int i = 0; i < 3; ++i) {
					const Entity &e = entities[i];
					if (strncmp(p + 1, e.pattern, e.length) == 0) {
						*q++ = e.value;
						p += e.length + 1;
						found = true;
						break;
					}
				}
				if (!found) {
					++p;
					++q;
				}
			}
		} // BRACE_GOTO
		else {
			*q = *p;
			++p;
		}
	}
}

// XMLNode::InsertChildPreamble: an && over lines in a value, whose
// second operand is a virtual call; g++ locates each operand's test at
// the operator before it.
struct Decl;
struct Node {
	Node *first, *last;
	virtual Decl *ToDeclaration() { return 0; }
	Node *FirstChild() { return first; }
	Node *LastChild() { return last; }
	virtual ~Node() {}
};
struct Decl : Node {
	Decl *ToDeclaration() override { return this; }
};

static int wellLocated(Node *n)
{
	bool well = false;
	if (n->FirstChild()) {
		well =
			n->FirstChild() && // FIRST_OPERAND
			n->FirstChild()->ToDeclaration() &&
			n->LastChild() &&
			n->LastChild()->ToDeclaration();
	}
	return well;
}

// XMLDocument::SetError: va_end (no code) right after a call, at the end
// of the if's block, runs with the call, not with the join after the if.
static char buffer[64];
static int report(int id, const char *format, ...)
{
	snprintf(buffer, sizeof buffer, "Error=%d", id);
	if (format) {
		size_t len = strlen(buffer);
		va_list va;
		va_start(va, format);
		vsnprintf(buffer + len, sizeof buffer - len, format, va);
		va_end(va); // VA_END
	}
	return (int)strlen(buffer);
}

// XMLUtil::ConvertUTF32ToUTF8: a default last in its switch with nothing
// after it but an assert compiled out shares GCC's block with the
// switch's end, which case 1's break enters too.
#define TIXMLASSERT(x) {}
static char utf8[8];
static void convertUTF32(unsigned long input, int *length)
{
	char *output = utf8 + *length;
	switch (*length) {
		case 4:
			--output;
			*output = (char)((input | 0x80) & 0xBF);
			input >>= 6;
			//fall through
		case 3:
			--output;
			*output = (char)((input | 0x80) & 0xBF);
			input >>= 6;
			//fall through
		case 2:
			--output;
			*output = (char)((input | 0x80) & 0xBF);
			input >>= 6;
			//fall through
		case 1:
			--output;
			*output = (char)(input | 0xC0);
			break;
		default: // TRAILING_DEFAULT
			TIXMLASSERT(false);
	}
}

// The same switch as in XMLUtil::ConvertUTF32ToUTF8 itself, behind an
// early return, in a scope with a local array: the switch's end holds the
// array's clobbers, a block of GCC's the return does not enter (it runs
// through a copy of its own), so the default counts the switch's arcs only.
static void convertFull(unsigned long input, int *length)
{
	const unsigned long FIRST_BYTE_MARK[7] = { 0x00, 0x00, 0xC0, 0xE0, 0xF0, 0xF8, 0xFC };
	char *output = utf8;
	if (input < 0x80) {
		*length = 1;
	}
	else if (input < 0x800) {
		*length = 2;
	}
	else {
		*length = 0;
		return;
	}
	output += *length;
	switch (*length) {
		case 2:
			--output;
			*output = (char)((input | 0x80) & 0xBF);
			input >>= 6;
			//fall through
		case 1:
			--output;
			*output = (char)(input | FIRST_BYTE_MARK[*length]);
			break;
		default: // CLOBBERED_DEFAULT
			TIXMLASSERT(false);
	}
}

// XMLNode::ParseDeep: a loop body whose local's address is taken (its
// clobbers' copies) and an object with a destructor declared after a
// first break. The breaks after it leave through the destructor's
// cleanup, which -O0 lowers as a switch on a flag and which goes on to
// the clobbers' copy for the loop's exit, located at the first break:
// that break's line counts every break, each once.
struct EndTag {
	int v;
	EndTag() : v(0) {}
	~EndTag()
	{
		v = 1;
	}
};
static void identify(int *node, int i)
{
	*node = (i * 7 + 3) % 5;
}
static int parseDeep(int n)
{
	int r = 0;
	int i = 0;
	while (i < n) {
		int node = 0;
		identify(&node, i++);
		if (node == 0) {
			break; // BREAK_BEFORE_DTOR
		}
		EndTag tag;
		if (node == 3) {
			r++;
			break;
		}
		r += node;
	}
	return r;
}

// XMLPrinter::PrintString: an if on a bool's negation whose block is an
// assert compiled out: g++ keeps `!printed` as a statement.
static int printedCount;
static void printEntity(int v)
{
	bool printed = false;
	for (int i = 0; i < 3; ++i) {
		if (v == i) {
			printedCount += i;
			printed = true;
			break;
		}
	}
	if ( !printed ) { // BOOL_NOT
		// TIXMLASSERT( printed ) would do here
		TIXMLASSERT( false );
	}
	printedCount++;
}

int main()
{
	char out[100];
	unescape("ab&#c&amp&&lty&x&#x", out);
	printf("%c\n", out[0]);
	Decl d1, d2;
	Node n1;
	d1.first = d1.last = 0;
	d2.first = d2.last = 0;
	Node root, root2;
	root.first = &d1;
	root.last = &d2;
	root2.first = &n1;
	root2.last = &d2;
	int s = 0;
	for (int i = 0; i < 5; i++)
		s += wellLocated(&root) + wellLocated(&root2) + wellLocated(&d1);
	for (int i = -2; i < 5; i++)
		s += report(i, i % 3 ? " x=%d" : 0, i);
	for (int i = 0; i < 12; i++) {
		int len = i % 6;
		convertUTF32(i * 77, &len);
		convertFull(i * 300, &len);
		s += parseDeep(i);
		printEntity(i);
	}
	printf("%d %d\n", s, printedCount);
	return 0;
}
