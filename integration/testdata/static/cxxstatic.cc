// A statically linked C++ program: std::string, iostream, exceptions and
// the C library's string functions underneath. Build with -static.
#include <iostream>
#include <stdexcept>
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
		try {
			if (i == 3)
				throw std::runtime_error("three");
			std::cout << build(i * 7) << "\n";
		} catch (const std::exception &e) {
			std::cout << "caught " << e.what() << "\n";
		}
	}
	std::cout << argc << std::endl;
	return 2;
}
