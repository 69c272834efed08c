// sandbox runs f and g under a seccomp sandbox: "sandbox ACTION WHEN".
// ACTION: kill (a filter that kills the process at memfd_create, or at an
// mmap with MAP_FIXED_NOREPLACE: what patchprof would inject, and what
// this program and its C library never call), errno (the same calls fail
// with EPERM), strict (SECCOMP_MODE_STRICT: read, write, _exit and
// sigreturn only). WHEN: now (installed, then f 1000 times and g 10),
// exec (installed, then the program execs itself to do that: the filter
// is there at the exec), attach (installed, then "ready"; each line n on
// stdin calls f n times and answers "done n total"; at the end of input,
// "bye F G"), busy (installed, then "ready", then a loop of f, a write to
// /dev/null and a read of stdin made non-blocking, all system calls strict
// mode allows, until a 'q' comes: "bye F G"), fork (installed, then the
// program forks: the child does what now does, then the parent after it),
// forklate (f 1000 times and g 10 first, then as fork: the child inherits
// what patchprof planted before the filter). Output through write(2) only; the end through _exit's system
// call, the only one strict mode allows. Build: gcc -g -O0.
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static long nf, ng;

__attribute__((noinline)) void f(void) { nf++; }
__attribute__((noinline)) void g(void) { ng++; }

static void say(const char *s) {
	size_t n = strlen(s);
	while (n > 0) {
		ssize_t w = write(1, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= w;
	}
}

static void end(int code) { syscall(SYS_exit, code); }

static void install(const char *action) {
	if (strcmp(action, "strict") == 0) {
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0) {
			perror("seccomp strict");
			exit(2);
		}
		return;
	}
	unsigned int ret = SECCOMP_RET_KILL_PROCESS;
	if (strcmp(action, "errno") == 0)
		ret = SECCOMP_RET_ERRNO | EPERM;
	struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_memfd_create, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[3])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x100000, 0, 1), // MAP_FIXED_NOREPLACE
		BPF_STMT(BPF_RET | BPF_K, ret),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog fp = {.len = sizeof prog / sizeof prog[0], .filter = prog};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) != 0) {
		perror("seccomp filter");
		exit(2);
	}
}

static void work(void) {
	char b[64];
	for (int k = 0; k < 1000; k++)
		f();
	for (int k = 0; k < 10; k++)
		g();
	snprintf(b, sizeof b, "f=%ld g=%ld\n", nf, ng);
	say(b);
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: sandbox kill|errno|strict now|exec|fork|forklate|attach|busy\n");
		return 2;
	}
	char b[64];
	if (strcmp(argv[2], "run") == 0) {
		work();
		end(0);
	}
	if (strcmp(argv[2], "forklate") == 0)
		work();
	snprintf(b, sizeof b, "ready\n");
	int null = -1;
	if (strcmp(argv[2], "busy") == 0) {
		null = open("/dev/null", O_WRONLY);
		if (null < 0 || fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK) != 0) {
			perror("busy");
			return 2;
		}
	}
	install(argv[1]);
	if (strcmp(argv[2], "exec") == 0) {
		char *args[] = {argv[0], argv[1], "run", NULL};
		execv("/proc/self/exe", args);
		perror("execv");
		end(2);
	}
	if (strcmp(argv[2], "fork") == 0 || strcmp(argv[2], "forklate") == 0) {
		pid_t child = fork();
		if (child < 0)
			end(2);
		if (child == 0) {
			work();
			end(0);
		}
		int status;
		if (waitpid(child, &status, 0) != child || status != 0)
			end(3);
		work();
		end(0);
	}
	if (strcmp(argv[2], "now") == 0) {
		work();
		end(0);
	}
	say(b);
	char c;
	if (null >= 0) {
		for (;;) {
			f();
			if (write(null, "x", 1) != 1)
				end(3);
			if (read(0, &c, 1) == 1 && c == 'q')
				break;
		}
		snprintf(b, sizeof b, "bye %ld %ld\n", nf, ng);
		say(b);
		end(0);
	}
	long total = 0, n = 0;
	while (read(0, &c, 1) == 1) {
		if (c >= '0' && c <= '9') {
			n = 10 * n + (c - '0');
			continue;
		}
		if (c != '\n')
			continue;
		for (long k = 0; k < n; k++)
			f();
		g();
		total += n;
		snprintf(b, sizeof b, "done %ld %ld\n", n, total);
		say(b);
		n = 0;
	}
	snprintf(b, sizeof b, "bye %ld %ld\n", nf, ng);
	say(b);
	end(0);
}
