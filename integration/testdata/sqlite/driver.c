/*
 * driver.c: a small deterministic SQLite workload for TestSQLiteGcov
 * (integration/sqlite_test.go), which counts SQLite's lines under patchprof
 * and under gcov and compares them. The amalgamation is not in the
 * repository: the test fetches it from the Go module github.com/mattn/go-sqlite3
 * (sqlite3-binding.c and .h) and builds
 *
 *	gcc -g -O0 -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION -I$DIR \
 *	    driver.c $DIR/sqlite3-binding.c
 *
 * It opens an in-memory database, creates a table with an index, inserts
 * NROWS rows in one transaction through a prepared statement, runs a few
 * SELECTs (range, aggregate, ORDER BY, join), an UPDATE and a DELETE, and
 * prints a checksum of everything it read. Every basic block of SQLite is a
 * trap under patchprof, so the workload stays small.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sqlite3-binding.h"

/* 500 rows make about 4 million hits under patchprof --lines --funcs (a
 * minute with the default engine on the 2-CPU development VM); 2000 made
 * 15 million (3.5 minutes). */
#define NROWS 500

static sqlite3 *db;
static unsigned long long checksum = 1469598103934665603ULL;

static void die(const char *what)
{
	fprintf(stderr, "driver: %s: %s\n", what, sqlite3_errmsg(db));
	exit(1);
}

static void run(const char *sql)
{
	if (sqlite3_exec(db, sql, 0, 0, 0) != SQLITE_OK)
		die(sql);
}

/* mix folds one value into the FNV-1a checksum. */
static void mix(long long v)
{
	for (int i = 0; i < 8; i++) {
		checksum ^= (unsigned char)(v >> (8 * i));
		checksum *= 1099511628211ULL;
	}
}

/* query runs sql with integer parameters a and b (when nonzero) and mixes
 * every integer column of every row into the checksum; it returns the
 * number of rows. */
static int query(const char *sql, int a, int b)
{
	sqlite3_stmt *st;
	int rows = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, 0) != SQLITE_OK)
		die(sql);
	if (a)
		sqlite3_bind_int(st, 1, a);
	if (b)
		sqlite3_bind_int(st, 2, b);
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (int c = 0; c < sqlite3_column_count(st); c++)
			mix(sqlite3_column_int64(st, c));
		rows++;
	}
	if (sqlite3_finalize(st) != SQLITE_OK)
		die(sql);
	mix(rows);
	return rows;
}

int main(void)
{
	sqlite3_stmt *ins;
	unsigned int seed = 12345;
	char name[32];

	if (sqlite3_open(":memory:", &db) != SQLITE_OK)
		die("open");
	run("CREATE TABLE item(id INTEGER PRIMARY KEY, grp INTEGER, val INTEGER, name TEXT)");
	run("CREATE INDEX item_grp ON item(grp, val)");
	run("CREATE TABLE grp(id INTEGER PRIMARY KEY, label TEXT)");

	run("BEGIN");
	if (sqlite3_prepare_v2(db, "INSERT INTO item(grp, val, name) VALUES(?, ?, ?)", -1, &ins, 0) != SQLITE_OK)
		die("prepare insert");
	for (int i = 0; i < NROWS; i++) {
		seed = seed * 1103515245u + 12345u; /* deterministic, libc-free */
		snprintf(name, sizeof name, "item-%d", i);
		sqlite3_bind_int(ins, 1, (seed >> 16) % 20);
		sqlite3_bind_int(ins, 2, (seed >> 8) % 1000);
		sqlite3_bind_text(ins, 3, name, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(ins) != SQLITE_DONE)
			die("insert");
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	for (int g = 0; g < 20; g++) {
		snprintf(name, sizeof name, "group %d", g);
		char sql[80];
		snprintf(sql, sizeof sql, "INSERT INTO grp VALUES(%d, '%s')", g, name);
		run(sql);
	}
	run("COMMIT");

	query("SELECT id, val FROM item WHERE grp = ?1 AND val BETWEEN 100 AND ?2", 7, 500);
	query("SELECT grp, count(*), sum(val), min(val), max(val) FROM item GROUP BY grp", 0, 0);
	query("SELECT id FROM item ORDER BY val DESC, id LIMIT 50", 0, 0);
	query("SELECT g.id, count(i.id) FROM grp g JOIN item i ON i.grp = g.id "
	      "WHERE i.val < ?1 GROUP BY g.id ORDER BY g.id", 300, 0);
	run("UPDATE item SET val = val + 1 WHERE grp = 3");
	run("DELETE FROM item WHERE val > 900");
	query("SELECT count(*), total(val) FROM item", 0, 0);

	if (sqlite3_close(db) != SQLITE_OK)
		die("close");
	printf("checksum %016llx\n", checksum);
	return 0;
}
