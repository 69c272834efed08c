// Compiler-generated constructors and destructors, for the gcov oracle
// (integration/gcovshapes_test.go). Build: g++ -g -O0 classes.cpp
#include <cstdio>
#include <string>
#include <vector>

struct Name {
	std::string first;
	std::string last;
};

class Person {
public:
	Person(const std::string &f, int age) : name{f, "Smith"}, age_(age) {}
	~Person() { destroyed++; } // PERSON_DTOR
	int age() const { return age_; }
	static int destroyed;

private:
	Name name;
	int age_;
};

int Person::destroyed = 0;

struct Holder {
	std::string label;
	std::vector<int> v;
};

static Holder make(int i)
{
	Holder h;
	h.label = "h";
	h.v.assign(i, i);
	return h;
}

int main()
{
	long total = 0;
	for (int i = 0; i < 7; i++) {
		Person p("p" + std::to_string(i), i);
		total += p.age(); // PERSON_AGE
		Holder h = make(i);
		Holder copy = h;
		total += copy.v.size();
	}
	std::vector<Person> people;
	for (int i = 0; i < 13; i++)
		people.emplace_back("q", i);
	std::printf("total %ld people %zu destroyed %d\n", total, people.size(), Person::destroyed);
	return 0;
}
