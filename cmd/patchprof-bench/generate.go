package main

import (
	"fmt"
	"path/filepath"
	"strings"
)

// genCalled is how many of a generated program's functions run.
const genCalled = 10

// genFuncs writes the C source of a program with n functions (n >= 1),
// each a loop of its own so that every one has blocks, arcs and lines to
// plan, of which main calls the first min(n, genCalled), each 1,000
// times: a program whose size on disk and whose running part are apart
// (issue 28). The others are reachable only through a table main never
// reads at run time, so the compiler keeps them.
func genFuncs(n int) []byte {
	var b strings.Builder
	b.WriteString("#include <stdio.h>\n\n")
	for i := range n {
		fmt.Fprintf(&b, "int f%d(int x)\n{\n\tint s = 0;\n\tfor (int i = 0; i < x; i++)\n\t\ts += i ^ %d;\n\treturn s;\n}\n\n", i, i)
	}
	b.WriteString("typedef int (*fn)(int);\n\nfn table[] = {\n")
	for i := range n {
		fmt.Fprintf(&b, "\tf%d,\n", i)
	}
	b.WriteString("};\n\nint main(int argc, char **argv)\n{\n\tlong sum = 0;\n")
	called := min(n, genCalled)
	fmt.Fprintf(&b, "\tfor (int r = 0; r < 1000; r++) {\n")
	for i := range called {
		fmt.Fprintf(&b, "\t\tsum += f%d(r %% 7);\n", i)
	}
	b.WriteString("\t}\n\tif (argc > 1)\n\t\tsum += table[0](argc);\n")
	b.WriteString("\tprintf(\"%ld\\n\", sum);\n\treturn 0;\n}\n")
	return []byte(b.String())
}

// rooted is a source path as gcc is given it: a path relative to the
// repository's root, or a generated file's absolute path as it is.
func rooted(root, src string) string {
	if filepath.IsAbs(src) {
		return src
	}
	return filepath.Join(root, src)
}
