package cfg

import (
	"strings"
	"sync"
)

// noReturn are functions known never to return: C library and compiler
// runtime exits, and the Go runtime functions the Go compiler itself ends
// a block after (cmd/compile/internal/ssagen: BlockExit after throw,
// gopanic, panicwrap, ..., and the bounds, divide, shift and type-assertion
// panics it calls from generated checks). runtime.morestack is not one of
// them: newstack resumes the function at the instruction after its call
// (with gogo), which then jumps back to the entry.
//
// The map is made at first use, not in the package's initialization, which
// every patchprof run pays (issue 28).
var noReturn = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		// C: ISO C, POSIX and glibc.
		"exit": true, "_exit": true, "_Exit": true, "abort": true, "quick_exit": true,
		"__assert_fail": true, "__assert_perror_fail": true, "__assert": true,
		"__stack_chk_fail": true, "__chk_fail": true, "__fortify_fail": true,
		"longjmp": true, "_longjmp": true, "siglongjmp": true, "__longjmp_chk": true,
		"pthread_exit": true, "err": true, "errx": true, "verr": true, "verrx": true,
		"__cxa_throw": true, "__cxa_rethrow": true, "__cxa_bad_cast": true,
		"__cxa_bad_typeid": true, "__cxa_pure_virtual": true, "_Unwind_Resume": true,
		"__ubsan_handle_builtin_unreachable": true,
		"_ZSt9terminatev":                    true, "std::terminate()": true,
		"__libc_fatal": true, "__libc_start_main": true, "__libc_start_call_main": true,

		// Go runtime: only what the compiler treats as a block exit, so no
		// code follows the call. Functions such as os.Exit or runtime.fatal do
		// not return either, but the compiler emits code after their calls.
		"runtime.throw": true, "runtime.throwinit": true, "runtime.gopanic": true,
		"runtime.panicwrap": true, "runtime.block": true, "runtime.panicnildottype": true,
		"runtime.panicmakeslicelen": true, "runtime.panicmakeslicecap": true,
		"runtime.panicunsafeslicelen": true, "runtime.panicunsafeslicenilptr": true,
		"runtime.panicunsafestringlen": true, "runtime.panicunsafestringnilptr": true,
		"runtime.panicrangestate": true, "runtime.panicBounds": true,
		"runtime.panicBounds64": true, "runtime.panicExtend": true,
		"runtime.panicIndex": true, "runtime.panicIndexU": true,
		"runtime.panicSliceAlen": true, "runtime.panicSliceAlenU": true,
		"runtime.panicSliceAcap": true, "runtime.panicSliceAcapU": true,
		"runtime.panicSliceB": true, "runtime.panicSliceBU": true,
		"runtime.panicSlice3Alen": true, "runtime.panicSlice3AlenU": true,
		"runtime.panicSlice3Acap": true, "runtime.panicSlice3AcapU": true,
		"runtime.panicSlice3B": true, "runtime.panicSlice3BU": true,
		"runtime.panicSlice3C": true, "runtime.panicSlice3CU": true,
		"runtime.panicSliceConvert": true, "runtime.panicdivide": true,
		"runtime.panicshift": true, "runtime.panicdottypeE": true, "runtime.panicdottypeI": true,
	}
})

// DefaultNoReturn reports whether name is a function known never to
// return: exit, abort, __stack_chk_fail, __assert_fail, runtime.throw,
// runtime.gopanic, the Go bounds-check panics and others. A symbol
// version ("exit@GLIBC_2.2.5", "exit@plt") and Go's ABI suffix
// ("runtime.throw.abi0") are ignored.
func DefaultNoReturn(name string) bool {
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	name = strings.TrimSuffix(name, ".abi0")
	return noReturn()[name]
}
