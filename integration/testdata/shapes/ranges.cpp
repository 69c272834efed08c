// Range-for and templates, for the gcov oracle
// (integration/gcovshapes_test.go). Build: g++ -g -O0 ranges.cpp
#include <cstdio>
#include <vector>

template <typename T>
T sum(const std::vector<T> &v)
{
	T s = 0;
	for (const T &x : v)
		s += x; // SUM_BODY
	return s;
}

template <typename T, int N>
T sumArray(const T (&a)[N])
{
	T s = 0;
	for (T x : a) s += x;
	return s;
}

int main()
{
	int arr[20];
	for (int i = 0; i < 20; i++)
		arr[i] = i;
	std::vector<int> vi(arr, arr + 20);
	std::vector<double> vd;
	for (int x : arr)
		vd.push_back(x * 0.5); // ARRAY_BODY
	long n = 0;
	for (auto &x : vi) {
		if (x % 7 == 0)
			continue;
		n += x;
	}
	std::printf("%d %.1f %d %ld\n", sum(vi), sum(vd), sumArray(arr), n);
	return 0;
}
