/*
 * audit.c: an LD_AUDIT library that blocks SIGTRAP in the dynamic linker's
 * mapping window (la_objopen runs as each object is mapped; the C library's
 * between the RT_ADD and RT_CONSISTENT notifications). patchprof runs that window
 * without system-call stops for other programs; under LD_AUDIT it must
 * not, or it would miss this sigprocmask and leave SIGTRAP unblocked after
 * its next breakpoint (TestLoaderWindowAudit).
 */
#define _GNU_SOURCE
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

unsigned int
la_version(unsigned int version)
{
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

unsigned int
la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	sigset_t s;

	(void)lmid;
	(void)cookie;
	/* Only the C library, mapped inside the window: the program's and the
	 * dynamic linker's own objects are reported outside it. */
	if (strstr(map->l_name, "libc.so") == 0)
		return 0;
	sigemptyset(&s);
	sigaddset(&s, SIGTRAP);
	sigprocmask(SIG_BLOCK, &s, 0);
	return 0;
}
