/* Statements GCC keeps in its graph (so gcov counts them) that -O0
   compiles to nothing: assignments a macro makes self-assignments, and
   cases whose statements are all compiled out. With an argument, the
   empty cases that share their jump-table entries with other values run:
   their counts are unknown to the binary (TestEmptyCasesUnknown). */
#define NDEBUG
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

#define NONE 0
#define SAME(x) (x)
#define JOIN(a, rc) (rc)
#define DEBUG_NOTE(s)

static int sink;

static int flags_for(int readonly, int n)
{
  int flags = 2;
  long size = n;
  int rc = n;
  if (readonly) {
    size = SAME(size); /* SAME_IF */
    flags &= ~2;
    flags |= NONE; /* NONE_STRAIGHT */
    sink++;
  }
  rc = abs(rc);

  rc = JOIN(size, rc); /* JOIN_AFTER_CALL */

  DEBUG_NOTE("after");

  sink += rc;
  return flags + (int)size;
}

/* Two empty cases: their entries point at one place. */
static int two_empty(int op)
{
  int r = 0;
  switch (op) {
    case 0:
      r += 1;
      break;
    case 1:
      r += 2;
      break;
    case 2: { /* TWO_EMPTY_A */
      assert(op == 2);
      break; /* TWO_EMPTY_A_BREAK */
    }
    case 3:
      r += 4;
      break;
    case 4:
      r += 5;
      break;
    case 5:
      r += 6;
      break;
    case 6: /* TWO_EMPTY_B */
#ifdef NEVER_DEFINED
      r += 7;
#endif
      break; /* TWO_EMPTY_B_BREAK */
    case 7:
      r += 8;
      break;
    default:
      r = -1;
      break;
  }
  return r;
}

/* One empty case, and a default with code: its arcs are its own. */
static int one_empty(int op)
{
  int r = 0;
  switch (op) {
    case 0:
      r += 1;
      break;
    case 1:
      r += 2;
      break;
    case 2: /* ONE_EMPTY */
      assert(op == 2);
      break; /* ONE_EMPTY_BREAK */
    case 3:
      r += 4;
      break;
    case 4:
      r += 5;
      break;
    case 5:
      r += 6;
      break;
    default:
      r = -1;
      break;
  }
  return r;
}

/* The same braced: -O0 points the entry at a nop with the break's row. */
static int one_braced(int op)
{
  int r = 0;
  switch (op) {
    case 0:
      r += 1;
      break;
    case 1:
      r += 2;
      break;
    case 2: { /* BRACED_EMPTY */
      assert(op == 2);
      break; /* BRACED_EMPTY_BREAK */
    }
    case 3:
      r += 4;
      break;
    case 4:
      r += 5;
      break;
    case 5:
      r += 6;
      break;
    default:
      r = -1;
      break;
  }
  return r;
}

/* No default: the values no case names go where the empty case goes. */
static int no_default(int op)
{
  int r = 0;
  switch (op) {
    case 0:
      r += 1;
      break;
    case 1:
      r += 2;
      break;
    case 2: /* NO_DEFAULT_EMPTY */
      break; /* NO_DEFAULT_EMPTY_BREAK */
    case 3:
      r += 4;
      break;
    case 4:
      r += 5;
      break;
    case 5:
      r += 6;
      break;
    case 6:
      r += 7;
      break;
  }
  return r;
}

/* Never called: every line gcov lists is 0. */
int never(int op)
{
  int r = 0;
  switch (op) {
    case 0:
      r += 1;
      break;
    case 1:
      r += 2;
      break;
    case 2: { /* NEVER_EMPTY */
#ifdef NEVER_DEFINED
      r = 9;
#endif
      break; /* NEVER_EMPTY_BREAK */
    }
    case 3:
      r += 4;
      break;
    case 4:
      r += 5;
      break;
    case 5:
      r += 6;
      break;
  }
  r |= NONE; /* NEVER_NONE */
  return r;
}

int main(int argc, char **argv)
{
  int total = 0;
  for (int i = 0; i < 5; i++)
    total += flags_for(i % 2, i - 2);
  for (int i = 0; i < 30; i++)
    if (i % 10 != 2 && i % 10 != 6)
      total += two_empty(i % 10);
  for (int i = 0; i < 21; i++)
    total += one_empty(i % 7);
  for (int i = 0; i < 14; i++)
    total += one_braced(i % 7);
  for (int i = 0; i < 12; i++)
    if (i % 6 != 2)
      total += no_default(i % 6);
  if (argc > 1) {
    total += two_empty(2) + two_empty(6);
    total += no_default(2) + no_default(9);
  }
  if (argc > 5)
    total += never(argc);
  printf("%d %d\n", total, sink);
  return 0;
}
