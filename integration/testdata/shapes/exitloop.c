/* A while (1) loop ended by exit() inside a callee, for the gcov oracle
 * (integration/gcovshapes_test.go). Build: gcc -g -O0 exitloop.c */
#include <stdio.h>
#include <stdlib.h>

struct node {
	int v;
	struct node *next;
};

static struct node nodes[100];
static long total;

static int get(struct node *n)
{
	if (n == NULL) {
		printf("total %ld\n", total);
		exit(0); /* GET_EXIT */
	}
	return n->v; /* GET_VALUE */
}

int main(void)
{
	struct node *n;
	int i;
	for (i = 0; i < 100; i++) {
		nodes[i].v = i;
		nodes[i].next = i + 1 < 100 ? &nodes[i + 1] : NULL;
	}
	n = &nodes[0];
	while (1) {
		total += get(n); /* LOOP_CALL */
		n = n->next; /* LOOP_NEXT */
	}
}
