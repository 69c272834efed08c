/* The second file of breakpoint's plan-test target. */
int other(int x)
{
	if (x > 3)
		return x - 1;
	return x + 1;
}
