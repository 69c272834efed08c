package symtab

import "testing"

// takenSrc takes the addresses of stored (a pointer in initialised data),
// passed (an argument made with lea or mov $imm) and vtab's two methods (a
// table of pointers), and only calls direct: AddressTaken must find the
// first four and not direct, in PIE and non-PIE builds, at -O0 and -O2.
const takenSrc = `
#include <stdlib.h>
__attribute__((noipa)) int stored(int x) { return x + 1; }
__attribute__((noipa)) int passed(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
__attribute__((noipa)) int m1(int x) { return x * 2; }
__attribute__((noipa)) int m2(int x) { return x * 3; }
__attribute__((noipa)) int direct(int x) { return x - 1; }
int (*volatile fp)(int) = stored;
int (*const vtab[])(int) = { m1, m2 };
int main(int argc, char **argv) {
	int a[3] = { 3, 1, 2 };
	qsort(a, 3, sizeof a[0], passed);
	return fp(a[0]) + vtab[argc & 1](a[1]) + direct(argc);
}
`

func TestAddressTaken(t *testing.T) {
	for _, flags := range [][]string{{"-O0", "-fpie", "-pie"}, {"-O2", "-fpie", "-pie"}, {"-O0", "-fno-pie", "-no-pie"}, {"-O2", "-fno-pie", "-no-pie"}} {
		f, err := Open(buildC(t, takenSrc, flags...))
		if err != nil {
			t.Fatal(err)
		}
		taken := f.AddressTaken()
		for name, want := range map[string]bool{"stored": true, "passed": true, "m1": true, "m2": true, "direct": false} {
			if got := taken(funcByName(t, f, name).Addr); got != want {
				t.Errorf("%v: %s taken %v, want %v", flags, name, got, want)
			}
		}
		f.Close()
	}
}
