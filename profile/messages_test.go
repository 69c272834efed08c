package profile

import (
	"strings"
	"testing"
)

// TestLoadMessages pins the whole message of refusals a user meets with a
// wrong or crafted file: one line, naming the file and the field, worded in
// the profile's terms and never in Go's (issue 12).
func TestLoadMessages(t *testing.T) {
	const minimal = `{"version":2,"executable":"/x","args":[],"mode":"lines,funcs","exit":{"code":0},"lines":[],"functions":[],"sites":[]}`
	edit := func(old, new string) string {
		if !strings.Contains(minimal, old) {
			t.Fatalf("test bug: %q not in minimal", old)
		}
		return strings.Replace(minimal, old, new, 1)
	}
	fn := func(extra string) string {
		return edit(`"functions":[]`, `"functions":[{"name":"f","count":1,"address":"0x10"`+extra+`}]`)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"array", `[1,2]`, "p.json: not a patchprof profile: the document is a list, not an object"},
		{"string", `"x"`, "p.json: not a patchprof profile: the document is a string, not an object"},
		{"number", `42`, "p.json: not a patchprof profile: the document is a number, not an object"},
		{"not json", "\x7fELF", "p.json: not a patchprof profile: not JSON at offset 1: invalid character '\\x7f' looking for beginning of value"},
		{"trailing", minimal + "{}", "p.json: not a patchprof profile: more data after the profile's end, at offset 117"},
		{"truncated", minimal[:40], "p.json: bad profile: truncated: the JSON ends before the profile does: unexpected EOF"},
		{"version string", edit(`"version":2`, `"version":"2"`), `p.json: bad profile: version: "2": want an integer`},
		{"negative count", edit(`"lines":[]`, `"lines":[{"file":"/a.c","line":3,"count":-1}]`), "p.json: bad profile: lines[0].count: -1: want an integer from 0 to 2^64-1"},
		{"count too large", edit(`"lines":[]`, `"lines":[{"file":"/a.c","line":3,"count":18446744073709551616}]`), "p.json: bad profile: lines[0].count: 18446744073709551616: want an integer from 0 to 2^64-1"},
		{"line string", edit(`"lines":[]`, `"lines":[{"file":"/a.c","line":"3","count":1}]`), "p.json: bad profile: lines[0].line: a string: want an integer"},
		{"lines object", edit(`"lines":[]`, `"lines":{}`), "p.json: bad profile: lines: an object: want a list"},
		{"address number", edit(`"sites":[]`, `"sites":[{"address":16,"count":1,"kind":"line"}]`), `p.json: bad profile: sites[0].address: a number: want an address, a string such as "0x401136"`},
		{"address hex", edit(`"sites":[]`, `"sites":[{"address":"0x1g","count":1,"kind":"line"}]`), `p.json: bad profile: sites[0].address: address "0x1g": want hex with a 0x prefix`},
		{"address 65 bits", edit(`"sites":[]`, `"sites":[{"address":"0x10000000000000000","count":1,"kind":"line"}]`), `p.json: bad profile: sites[0].address: address "0x10000000000000000": more than 64 bits`},
		{"exit 300", edit(`"code":0`, `"code":300`), "p.json: bad profile: exit.code: 300: want 0 to 255"},
		{"exit -1", edit(`"code":0`, `"code":-1`), "p.json: bad profile: exit.code: -1: want 0 to 255"},
		{"signal SIGFOO", edit(`{"code":0}`, `{"signal":"SIGFOO"}`), `p.json: bad profile: exit.signal: "SIGFOO": want a Linux signal name such as "SIGSEGV", or "signal N" with N from 1 to 64`},
		{"signal 65", edit(`{"code":0}`, `{"signal":"signal 65"}`), `p.json: bad profile: exit.signal: "signal 65": want a Linux signal name such as "SIGSEGV", or "signal N" with N from 1 to 64`},
		{"fault address of SIGTERM", edit(`{"code":0}`, `{"signal":"SIGTERM","fault_address":"0x0"}`), "p.json: bad profile: exit.fault_address: given for SIGTERM: only SIGSEGV, SIGBUS, SIGILL and SIGFPE have one"},
		{"pc of an exit", edit(`{"code":0}`, `{"code":0,"pc":"0x10"}`), "p.json: bad profile: exit.pc: a place of death without a fatal signal"},
		{"function of an exit", edit(`{"code":0}`, `{"code":0,"function":"main"}`), "p.json: bad profile: exit.function: a place of death without a fatal signal"},
		{"pc_outside without pc", edit(`{"code":0}`, `{"signal":"SIGTERM","pc_outside":true}`), "p.json: bad profile: exit.pc_outside: true without a pc"},
		{"executed > blocks", fn(`,"blocks":2,"blocks_executed":3`), "p.json: bad profile: functions[0].blocks_executed: 3: more than the function's 2 blocks"},
		{"executed without blocks", fn(`,"blocks_executed":1`), "p.json: bad profile: functions[0].blocks_executed: 1: more than the function's 0 blocks"},
		{"negative blocks", fn(`,"blocks":-2`), "p.json: bad profile: functions[0].blocks: -2: want >= 0"},
		{"negative edges", fn(`,"edges":-1`), "p.json: bad profile: functions[0].edges: -1: want >= 0"},
		{"negative returns", fn(`,"returns":-1`), "p.json: bad profile: functions[0].returns: -1: want an integer from 0 to 2^64-1"},
		{"control characters", edit(`"lines":[]`, `"lines":[{"file":"/a\n\u001b[2J.c","line":3,"count":1},{"file":"/a\n\u001b[2J.c","line":3,"count":1}]`), `p.json: bad profile: lines[1]: "/a\n\x1b[2J.c" line 3 listed twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decode(strings.NewReader(tc.data), "p.json")
			if err == nil {
				t.Fatalf("accepted %s", tc.data)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n%s\nwant\n%s", err, tc.want)
			}
			if strings.ContainsAny(err.Error(), "\n\x1b") || strings.Contains(err.Error(), "struct {") {
				t.Errorf("message %q has a newline, an escape or Go's types", err)
			}
		})
	}
}
