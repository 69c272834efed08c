/* unwind_test.go's target: middle moves its stack pointer and calls work;
 * built -O2, it keeps no frame pointer. */
__attribute__((noipa)) long work(long n) { return n * 3; }

__attribute__((noipa)) long middle(long n)
{
	volatile long pad[8] = {0};
	pad[n & 7] = n;
	return work(n) + pad[3];
}

int main(int argc, char **argv) { return (int)middle(argc); }
