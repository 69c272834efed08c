/* libcg.so of the call graph test: lib_twice calls lib_helper through the
 * PLT (a global function of a -fPIC library can be interposed). */
__attribute__((noipa)) int lib_helper(int x) { return x + 1; }

__attribute__((noipa)) int lib_twice(int x)
{
	return lib_helper(x) + lib_helper(x); /* site:helper */
}
