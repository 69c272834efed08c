/* The -O2 shape of TinyXML-2's XMLNode::ToElement, ToText and their
 * overrides: virtual functions of 3 bytes (xor %eax,%eax; ret) and 4
 * bytes (mov %rdi,%rax; ret), each followed by alignment padding, called
 * through the vtable. noipa keeps each a function of its own where g++
 * would otherwise inline a speculatively devirtualized call.
 *
 * tinyvirt N: N rounds over a Node, an Element and a Text (N a multiple
 * of 3 gives N/3 of each), each asking every node ToElement and ToText;
 * prints how many of each answered. tinyvirt stdin: rounds until its
 * standard input ends, a heartbeat ("beat S TOTAL") every half second
 * (beats.h), for an attach. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "beats.h"

struct Element;
struct Text;

struct Node {
	__attribute__((noipa)) virtual Element *ToElement() { return nullptr; } /* NODE_ELEMENT */
	__attribute__((noipa)) virtual Text *ToText() { return nullptr; } /* NODE_TEXT */
	virtual ~Node() {}
};

struct Element : Node {
	__attribute__((noipa)) Element *ToElement() override { return this; } /* ELEMENT */
};

struct Text : Node {
	__attribute__((noipa)) Text *ToText() override { return this; } /* TEXT */
};

static Node *nodes[3];
static long elements, texts;

__attribute__((noinline)) static void rounds(long n)
{
	for (long i = 0; i < n; i++) {
		Node *node = nodes[i % 3];
		if (node->ToElement())
			elements++;
		if (node->ToText())
			texts++;
	}
}

int main(int argc, char **argv)
{
	nodes[0] = new Node;
	nodes[1] = new Element;
	nodes[2] = new Text;
	if (argc > 1 && !strcmp(argv[1], "stdin"))
		return beatUntilEOF(rounds);
	long n = argc > 1 ? atol(argv[1]) : 300000;
	rounds(n);
	printf("elements %ld texts %ld\n", elements, texts);
	for (Node *node : nodes)
		delete node;
	return 0;
}
