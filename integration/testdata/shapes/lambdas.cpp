// Lambdas with std::sort, and virtual calls through a base pointer, for the
// gcov oracle (integration/gcovshapes_test.go). Build: g++ -g -O0 lambdas.cpp
#include <algorithm>
#include <cstdio>
#include <vector>

struct Shape {
	virtual ~Shape() {}
	virtual int area() const = 0;
};

struct Square : Shape {
	int s;
	explicit Square(int s) : s(s) {}
	int area() const override { return s * s; } // SQUARE_AREA
};

struct Rect : Shape {
	int w, h;
	Rect(int w, int h) : w(w), h(h) {}
	int area() const override
	{
		return w * h;
	}
};

int main()
{
	std::vector<int> v;
	for (int i = 0; i < 100; i++)
		v.push_back((i * 37) % 100);
	long calls = 0;
	std::sort(v.begin(), v.end(), [&calls](int a, int b) {
		calls++;
		return a > b;
	});
	auto twice = [](int x) { return 2 * x; };
	long t = 0;
	for (int x : v)
		t += twice(x);
	std::vector<Shape *> shapes;
	for (int i = 0; i < 13; i++) {
		if (i % 2)
			shapes.push_back(new Square(i));
		else
			shapes.push_back(new Rect(i, 2));
	}
	long area = 0;
	for (const Shape *s : shapes)
		area += s->area();
	for (Shape *s : shapes)
		delete s;
	std::printf("first %d calls %ld t %ld area %ld\n", v[0], calls, t, area);
	return 0;
}
