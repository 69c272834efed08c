/* Functions whose edges do not all follow from their block counts. In
   init_array, a test, then a loop closed by another test: two conditional
   jumps to the same two blocks (SQLite's initMemArray). In classify, two
   jump tables (one per cluster of cases) with targets in common (SQLite's
   yy_destructor). The in-process engine counts arcs of them in the target
   (TestArcsInProcess); every engine and gcov agree on their lines
   (TestShapesGcov). */
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

/* Two clusters of cases, far apart: GCC dispatches each through a jump
   table of its own, and the cases that share a body are targets of both. */
static int classify(int op)
{
  int r = 0;
  switch (op) { /* CLASSIFY_SWITCH */
    case 0: case 1000:
      r = 1; /* SHARED_ZERO */
      break;
    case 1: case 1001:
      r = 2;
      break;
    case 2: case 1002:
      r = 3; /* SHARED_TWO */
      break;
    case 3: case 1003:
      r = 4;
      break;
    case 4:
      r = 5;
      break;
    case 5:
      r = 6;
      break;
    case 1004:
      r = 7; /* ONLY_1004 */
      break;
    case 1005:
      r = 8;
      break;
    default:
      r = -1; /* CLASSIFY_DEFAULT */
      break;
  }
  return r;
}

int main(void)
{
  struct mem a[64];
  long sum = 0;
  for (int i = 0; i < 40; i++) {
    init_array(a, i % 9, i);
    sum += a[0].flags;
  }
  for (int i = 0; i < 70; i++)
    sum += classify(i % 7 + (i % 2 ? 1000 : 0));
  printf("%ld\n", sum);
  return 0;
}
