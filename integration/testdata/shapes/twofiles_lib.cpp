// The second file of twofiles.cpp: functions and a template it calls.
#include <string>

template <typename T>
static T clamp(T v, T lo, T hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

int
score(int x)
{
	int s = 0;
	for (int k = 0; k < x; k++) s += k % 7;
	if (s > 20)
		s = clamp(s, 0, 30);
	return s;
}

std::string
label(int i)
{
	static const std::string prefix = "item ";
	return prefix + std::to_string(i);
}
