/* The -O2 shape of TinyXML-2's XMLNode::ParseDeep and of Jim Tcl's
   JimSearchList: the result of each of two calls is tested in a block of
   its own (`test %eax, %eax; jne`, 4 bytes, too short for a jmp rel32),
   and both tests go to the same two blocks, which leaves an arc free. The
   in-process engine counts it in a short site's trampoline
   (TestArcsShortO2).

   Of i < 100, 34 are multiples of 3, 17 of them odd; of the other 66,
   32 are above 50: 49 calls return i + 1. */
#include <stdio.h>

static volatile int sink;

__attribute__((noinline)) static int odd(int x) { sink = x; return x & 1; }
__attribute__((noinline)) static int big(int x) { sink = x; return x > 50; }

__attribute__((noinline)) static int pick(int i)
{
  int r;
  if (i % 3 == 0) /* PICK_TEST */
    r = odd(i); /* PICK_ODD */
  else
    r = big(i); /* PICK_BIG */
  if (r) /* PICK_R */
    return i + 1; /* PICK_YES */
  sink = i; /* PICK_NO */
  return 2 * i;
}

int main(void)
{
  long sum = 0;
  for (int i = 0; i < 100; i++)
    sum += pick(i);
  printf("%ld\n", sum);
  return 0;
}
