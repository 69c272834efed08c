// Template instances, each shown apart as gcov shows them
// (integration/templates_test.go). Build: g++ -g -O0 templates.cpp
#include <cstdio>

template <typename T>
T biggest(T a, T b)
{
	if (a < b) // BIGGEST_IF
		return b;
	return a;
}

template <typename T>
class Box {
public:
	explicit Box(T v) : v_(v) {}
	T grow(int n)
	{
		for (int i = 0; i < n; i++) // GROW_FOR
			v_ = v_ + v_;
		return v_;
	}

private:
	T v_;
};

// twice is one line that both of its instances share.
template <typename T> T twice(T x) { return x + x; } // TWICE_LINE

int main()
{
	int ti = 0;
	double td = 0;
	for (int i = 0; i < 7; i++)
		ti += biggest(i, 3); // MAIN_INT
	for (int i = 0; i < 3; i++)
		td += biggest(0.5 * i, 1.0); // MAIN_DOUBLE
	Box<int> bi(1);
	Box<long> bl(1);
	ti += bi.grow(4);
	ti += (int)bl.grow(2);
	ti += (int)bl.grow(3);
	ti += twice(2) + (int)twice(1.5) + (int)twice(2.5);
	std::printf("%d %g\n", ti, td);
	return 0;
}
