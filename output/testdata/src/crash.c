#include <stddef.h>

static int
div0(int a)	/* the crash */
{
	int *p = NULL;
	return a / *p;		// boom
}

int
helper(int k)
{
	if (k > 2)
		return div0(k);
	return k;
}
