/*
 * sqliteloop.c: the bench's SQLite driver (integration/testdata/sqlite/
 * driver.c) made to loop, for the measure of how long an attach stops a
 * process (the bench's sqliteattach workload, pause_linux.go): its main
 * runs forever, 1 ms apart, until the bench kills it; each run's checksum
 * line is flushed at once, so that the bench sees it run.
 */
#include <stdio.h>
#include <unistd.h>

#define main driver_main
#include "../../../integration/testdata/sqlite/driver.c"
#undef main

int main(void)
{
	for (;;) {
		driver_main();
		fflush(stdout);
		usleep(1000);
	}
}
