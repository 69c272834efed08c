// exceptions.cpp: a C++ exception thrown DEPTH frames down and caught in
// main, 5 times; one frame on the way holds an object whose destructor
// runs as the exception passes (a landing pad that resumes unwinding),
// another catches and rethrows. The frames above the throw never run the
// code after their call.
#include <cstdio>
#include <stdexcept>

static volatile long sink;

struct Guard {
	int n;
	~Guard() { sink += n; }
};

__attribute__((noipa)) static int
work(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++) {
		if (i % 3 == 0)
			s += i;
		else
			s -= 1;
	}
	return s;
}

__attribute__((noipa)) static int
bottom(int n)
{
	for (int i = 0; i < n; i++) {
		sink += i;
		if (i == n / 2)
			throw std::runtime_error("deep"); // THROW_LINE
		sink -= 1;
	}
	return n;
}

__attribute__((noipa)) static int
level(int depth, int n)
{
	int s = work(n);
	if (depth == 0)
		return s + bottom(n);
	if (depth == 2) {
		Guard g{depth};
		s += level(depth - 1, n + 1);
		sink += s;
	} else if (depth == 3) {
		try {
			s += level(depth - 1, n + 2);
		} catch (const std::exception &) {
			sink += 1;
			throw;
		}
	} else if (s & 1) {
		s += level(depth - 1, n + 1);
	} else {
		s -= level(depth - 1, n + 2);
	}
	sink += s; // AFTER_CALL
	return s;
}

int
main()
{
	int caught = 0;
	for (int k = 0; k < 5; k++) {
		try {
			sink += level(4, 10 + k);
		} catch (const std::exception &e) {
			caught++;
		}
	}
	std::printf("caught %d sink %ld\n", caught, (long)sink);
	return 0;
}
