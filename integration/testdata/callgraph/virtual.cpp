// The call graph test's C++ target (callgraph_test.go): one virtual call
// site, run 7 times, enters Square::area 3 times and Circle::area 4 times.
// The objects are made at run time from argc, so GCC cannot devirtualize
// the call; noipa keeps every function called as written.
#include <cstdio>

struct Shape {
	virtual int area() const = 0;
	virtual ~Shape() {}
};

struct Square : Shape {
	int s;
	explicit Square(int v) : s(v) {}
	__attribute__((noipa)) int area() const override { return s * s; }
};

struct Circle : Shape {
	int r;
	explicit Circle(int v) : r(v) {}
	__attribute__((noipa)) int area() const override { return 3 * r * r; }
};

__attribute__((noipa)) int total(Shape *const *shapes, int n)
{
	int sum = 0;
	for (int i = 0; i < n; i++)
		sum += shapes[i]->area(); /* site:virtual */
	return sum;
}

int main(int argc, char **)
{
	Square a(argc), b(argc + 1), c(argc + 2);
	Circle d(argc), e(argc + 1), f(argc + 2), g(argc + 3);
	Shape *shapes[] = {&a, &d, &b, &e, &c, &f, &g};
	std::printf("virtual %d\n", total(shapes, 7));
	return 0;
}
