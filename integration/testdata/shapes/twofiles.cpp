// The main file of a C++ program of two source files, for the selection
// tests (integration/gcovshapes_test.go).
// Build: g++ -g -O0 twofiles.cpp twofiles_lib.cpp
#include <cstdio>
#include <string>

int score(int x);
std::string label(int i);

struct Tally {
	long sum = 0;
	int n = 0;
	void add(int v)
	{
		sum += v;
		n++;
	}
};

int
main()
{
	Tally t;
	for (int i = 0; i < 13; i++) {
		t.add(score(i));
		if (i % 4 == 0)
			std::printf("%s\n", label(i).c_str());
	}
	std::printf("sum %ld n %d\n", t.sum, t.n);
	return 0;
}
