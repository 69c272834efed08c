/*
 * faultmid.c: work() runs 5 times as one basic block; the fifth time its
 * store through a null pointer faults in the middle of the block, so the
 * lines before the fault ran 5 times and the lines after it 4.
 */
static int target;
static int *volatile where;
static volatile long sink;

__attribute__((noipa)) void
work(int n)
{
	sink += n;     /* BEFORE_FAULT */
	sink += 2 * n; /* BEFORE_FAULT2 */
	*where = n;    /* FAULT_LINE */
	sink += 3 * n; /* AFTER_FAULT */
	sink -= n;     /* AFTER_FAULT2 */
}

int
main(void)
{
	for (int i = 0; i < 5; i++) {
		where = i < 4 ? &target : 0;
		work(i);
	}
	return 0;
}
