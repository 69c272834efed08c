// Exceptions thrown and caught, from nested calls and in the same function,
// for the gcov oracle (integration/gcovshapes_test.go).
// Build: g++ -g -O0 exceptions.cpp
#include <cstdio>
#include <stdexcept>

static int deep(int i)
{
	if (i % 3 == 0)
		throw std::runtime_error("three"); // DEEP_THROW
	return i;
}

static int middle(int i)
{
	return deep(i) + 1;
}

static int local(int i)
{
	try {
		if (i % 2)
			throw i;
		return 0;
	} catch (int e) {
		return e; // LOCAL_CATCH
	}
}

int main()
{
	int caught = 0, sum = 0;
	for (int i = 0; i < 13; i++) {
		try {
			sum += middle(i);
		} catch (const std::exception &e) {
			caught++; // MAIN_CATCH
		}
		sum += local(i);
	}
	try {
		throw std::logic_error("once");
	} catch (...) {
		caught++;
	}
	std::printf("caught %d sum %d\n", caught, sum);
	return 0;
}
