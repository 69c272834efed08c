// A statically linked C++ program: std::string and iostream, with the C
// library's string functions underneath. Build with -static. (No
// exception: the first throw in a static program sorts every frame
// description of the binary, a quarter of a million calls of
// read_encoded_value_with_base, whose flow is not recovered, so that each
// traps: minutes under the trap engines.)
#include <cstring>
#include <iostream>
#include <string>

static std::string build(int n)
{
	std::string s = "s";
	for (int i = 0; i < n; i++)
		s += std::to_string(i);
	return s;
}

int main(int argc, char **argv)
{
	for (int i = 0; i < 5; i++) {
		std::string s = build(i * 7);
		std::cout << s << " " << std::strlen(s.c_str()) << "\n";
	}
	std::cout << argc << std::endl;
	return 2;
}
