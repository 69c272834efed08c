package output

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// DisplayName returns a symbol name as its language writes it: C++ names
// (Itanium ABI, "_Z...") and Rust names (legacy "_ZN...17h<hash>E", shown
// without the hash, and v0 "_R...") demangled, with parameter lists kept so
// overloads stay apart. Anything else, Go names included, is returned as it
// is: the Go linker already writes Go's own spelling
// ("main.(*T).Run", "pkg.F[...]"), and a C name is its own spelling. A
// name that does not demangle is returned unchanged, so DisplayName never
// loses a name.
func DisplayName(name string) string {
	if !strings.HasPrefix(name, "_Z") && !strings.HasPrefix(name, "_R") {
		return name
	}
	return demangle.Filter(name)
}
