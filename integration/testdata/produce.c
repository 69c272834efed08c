/* The first program of a pipeline: writes 1000 numbers, calling emit for
 * each. */
#include <stdio.h>

static void emit(int i)
{
	printf("%d\n", i); /* EMIT_BODY */
}

int main(void)
{
	for (int i = 0; i < 1000; i++)
		emit(i);
	return 0;
}
