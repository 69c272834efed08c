// Function static locals (guarded initialisation), for the gcov oracle
// (integration/gcovshapes_test.go). Build: g++ -g -O0 statics.cpp
#include <cstdio>
#include <string>

static int initCalls;

static int init(int v)
{
	initCalls++;
	return v * 2;
}

struct Counter {
	Counter() : n(init(1)) {}
	int n;
};

static int next()
{
	static int base = init(21); // STATIC_INIT
	static Counter c;
	static std::string name("counter");
	static int plain = 5;
	return base + c.n++ + plain + int(name.size());
}

int main()
{
	long s = 0;
	for (int i = 0; i < 100; i++)
		s += next(); // MAIN_NEXT
	std::printf("s %ld inits %d\n", s, initCalls);
	return 0;
}
