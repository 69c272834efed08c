/* A function whose edges do not all follow from its block counts: a test,
   then a loop closed by another test, two conditional jumps to the same
   two blocks (SQLite's initMemArray). The in-process engine counts one arc
   of it in the target (TestArcsInProcess); every engine and gcov agree on
   its lines (TestShapesGcov). */
#include <stdio.h>

struct mem {
  int flags;
  long v;
};

static void init_array(struct mem *p, int n, int flags)
{
  if (n > 0) { /* INIT_TEST */
    do {
      p->flags = flags; /* INIT_BODY */
      p->v = 0;
      p++;
    } while ((--n) > 0); /* INIT_CLOSE */
  }
}

int main(void)
{
  struct mem a[64];
  long sum = 0;
  for (int i = 0; i < 40; i++) {
    init_array(a, i % 9, i);
    sum += a[0].flags;
  }
  printf("%ld\n", sum);
  return 0;
}
