/*
 * empty.c: a program that does nothing. Its time under patchprof is the
 * fixed cost of a run (start-up, planting, the report), which the ratios of
 * short workloads are made of (bench/, issue 13).
 */
int
main(void)
{
	return 0;
}
