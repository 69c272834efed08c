// Exception landing pads for cfg's LSDA tests (lsda_test.go): a catch
// block, a cleanup that runs a destructor then resumes unwinding, and a
// function with neither. Built at test time: g++ -O0 and g++ -O2.
#include <cstdio>
#include <stdexcept>

struct Guard {
	int *p;
	~Guard() { ++*p; }
};

__attribute__((noinline)) static int thrower(int i)
{
	if (i % 3 == 0)
		throw std::runtime_error("three");
	return i;
}

// cleanup has a landing pad that destroys g and calls _Unwind_Resume.
__attribute__((noinline)) static int cleanup(int i, int *n)
{
	Guard g{n};
	return thrower(i) + 1;
}

// catcher has a landing pad that enters its catch block.
__attribute__((noinline)) static int catcher(int i, int *n)
{
	try {
		return cleanup(i, n);
	} catch (const std::exception &e) {
		return -1;
	}
}

// plain has no landing pad.
__attribute__((noinline)) static int plain(int i)
{
	return i * 2;
}

int main()
{
	int n = 0, sum = 0;
	for (int i = 0; i < 7; i++)
		sum += catcher(i, &n) + plain(i);
	std::printf("%d %d\n", sum, n);
	return 0;
}
