/* sigtrap: a program that ignores, blocks or handles SIGTRAP, and checks at
 * every call of f that its own view of SIGTRAP (disposition and mask) is
 * what it set. patchprof's int3 makes the kernel reset an ignored or blocked
 * SIGTRAP (force_sig): patchprof must repair that, invisibly.
 *
 *   sigtrap ign        SIGTRAP ignored; f x100; raise(SIGTRAP); "survived"
 *   sigtrap block      handler installed, SIGTRAP blocked around f x100;
 *                      raise(SIGTRAP) while blocked, then unblock: handled once
 *   sigtrap handler    a SIGTRAP handler that calls f; the program's own int3
 *                      twice: "handled 2"
 *   sigtrap icebp      an int1 (icebp) at a planted line: dies of SIGTRAP
 *   sigtrap wait       SIGTRAP ignored, then f once for each byte read until
 *                      stdin closes (for attach), printing "ready" first and
 *                      "got N" (the bytes so far) after each newline
 *   sigtrap late       f x10 with SIGTRAP's default; then SIGTRAP ignored
 *                      and late1 x10; then blocked too and late2 x10
 *   sigtrap mask       a SIGUSR1 handler whose sa_mask blocks SIGTRAP calls
 *                      late1 x5 and raises SIGTRAP (pending until it
 *                      returns, then handled once)
 *   sigtrap sigreturn  a SIGUSR1 handler adds SIGTRAP to the mask its
 *                      rt_sigreturn restores; then late2 x5 with SIGTRAP
 *                      blocked, and a raised SIGTRAP handled at its unblock
 * late1 and late2 first run in those states: under patchprof their first
 * call is a breakpoint, with SIGTRAP ignored or blocked.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <ucontext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static void (*want_handler)(int);
static int want_blocked;
static int mismatches;

static void on_trap(int sig) {
	(void)sig;
	handled++;
}

static void check(void) {
	struct sigaction sa;
	sigset_t cur;
	sigaction(SIGTRAP, NULL, &sa);
	sigprocmask(SIG_BLOCK, NULL, &cur);
	if (sa.sa_handler != want_handler || sigismember(&cur, SIGTRAP) != want_blocked)
		mismatches++;
}

int f(int x) {
	check();
	return x + 1;
}

__attribute__((noinline)) int late1(int x) {
	check();
	return x + 2;
}

__attribute__((noinline)) int late2(int x) {
	check();
	return x + 3;
}

static void usr1_blocks_trap(int sig) {
	(void)sig;
	long s = 0;
	want_blocked = 1; /* the action's sa_mask */
	for (int i = 0; i < 5; i++)
		s += late1(i);
	raise(SIGTRAP); /* pending until the handler returns */
	check();
	want_blocked = 0;
	(void)s;
}

static void usr1_sets_mask(int sig, siginfo_t *si, void *ctx) {
	(void)sig;
	(void)si;
	sigaddset(&((ucontext_t *)ctx)->uc_sigmask, SIGTRAP);
}

static void handler_calls_f(int sig) {
	(void)sig;
	/* SIGTRAP is blocked here, as in any handler of its own signal. */
	want_blocked = 1;
	f(0); /* HANDLER_CALL */
	want_blocked = 0;
	handled++;
}

/* No prologue: the int1 is the function's first instruction, where --funcs
 * plants. */
__attribute__((naked, noinline)) void icebp(void) {
	__asm__ volatile(".byte 0xf1\n\tret"); /* ICEBP */
}

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "ign";
	long s = 0;
	if (strcmp(mode, "ign") == 0) {
		signal(SIGTRAP, SIG_IGN);
		want_handler = SIG_IGN;
		for (int i = 0; i < 100; i++)
			s += f(i);
		raise(SIGTRAP);
		check();
		printf("survived %ld mismatches %d\n", s, mismatches);
	} else if (strcmp(mode, "block") == 0) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGTRAP);
		signal(SIGTRAP, on_trap);
		want_handler = on_trap;
		sigprocmask(SIG_BLOCK, &set, NULL);
		want_blocked = 1;
		for (int i = 0; i < 100; i++)
			s += f(i);
		raise(SIGTRAP); /* stays pending */
		check();
		want_blocked = 0;
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		check();
		printf("handled %d sum %ld mismatches %d\n", (int)handled, s, mismatches);
	} else if (strcmp(mode, "handler") == 0) {
		signal(SIGTRAP, handler_calls_f);
		want_handler = handler_calls_f;
		__asm__ volatile("int3");
		check();
		__asm__ volatile("int3");
		check();
		printf("handled %d mismatches %d\n", (int)handled, mismatches);
	} else if (strcmp(mode, "icebp") == 0) {
		want_handler = SIG_DFL;
		icebp();
		puts("icebp swallowed");
	} else if (strcmp(mode, "late") == 0) {
		want_handler = SIG_DFL;
		for (int i = 0; i < 10; i++)
			s += f(i);
		signal(SIGTRAP, SIG_IGN);
		want_handler = SIG_IGN;
		for (int i = 0; i < 10; i++)
			s += late1(i);
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGTRAP);
		sigprocmask(SIG_BLOCK, &set, NULL);
		want_blocked = 1;
		for (int i = 0; i < 10; i++)
			s += late2(i);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		want_blocked = 0;
		check();
		printf("late %ld mismatches %d\n", s, mismatches);
	} else if (strcmp(mode, "mask") == 0) {
		signal(SIGTRAP, on_trap);
		want_handler = on_trap;
		struct sigaction sa = {.sa_handler = usr1_blocks_trap};
		sigemptyset(&sa.sa_mask);
		sigaddset(&sa.sa_mask, SIGTRAP);
		sigaction(SIGUSR1, &sa, NULL);
		raise(SIGUSR1);
		check();
		printf("mask handled %d mismatches %d\n", (int)handled, mismatches);
	} else if (strcmp(mode, "sigreturn") == 0) {
		signal(SIGTRAP, on_trap);
		want_handler = on_trap;
		struct sigaction sa = {.sa_sigaction = usr1_sets_mask, .sa_flags = SA_SIGINFO};
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
		raise(SIGUSR1);
		want_blocked = 1; /* the mask rt_sigreturn restored */
		for (int i = 0; i < 5; i++)
			s += late2(i);
		raise(SIGTRAP); /* pending */
		check();
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, SIGTRAP);
		want_blocked = 0;
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		check();
		printf("sigreturn %ld handled %d mismatches %d\n", s, (int)handled, mismatches);
	} else if (strcmp(mode, "wait") == 0) {
		signal(SIGTRAP, SIG_IGN);
		want_handler = SIG_IGN;
		puts("ready");
		fflush(stdout);
		char c;
		long got = 0;
		while (read(0, &c, 1) == 1) {
			s += f((int)c);
			got++;
			if (c == '\n') {
				printf("got %ld\n", got);
				fflush(stdout);
			}
		}
		check();
		printf("done mismatches %d\n", mismatches);
	}
	return mismatches ? 3 : 0;
}
