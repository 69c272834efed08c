// Command cgosqlite is the bench's SQLite amalgamation built through cgo
// (github.com/mattn/go-sqlite3, C at -O0 with the bench's CGO_CFLAGS)
// behind a small Go driver: one 9 MB C source file that patchprof's line
// model reads, in a Go program. It prints how many of its rows match and
// their sum.
package main

import (
	"database/sql"
	"fmt"
	"log"
	"runtime"

	_ "github.com/mattn/go-sqlite3"
)

// init keeps the main goroutine on the main thread, so that every call
// into SQLite runs on one thread: its malloc then takes every block from
// one arena, and SQLite's pointer comparisons (is this block in the
// lookaside buffer?) come out the same in every run.
func init() { runtime.LockOSThread() }

func main() {
	db, err := sql.Open("sqlite3", ":memory:")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER)"); err != nil {
		log.Fatal(err)
	}
	for i := range 300 {
		if _, err := db.Exec("INSERT INTO t (name, n) VALUES (?, ?)", fmt.Sprintf("row%d", i), i*i%97); err != nil {
			log.Fatal(err)
		}
	}
	var count, sum int
	if err := db.QueryRow("SELECT count(*), sum(n) FROM t WHERE n > 10").Scan(&count, &sum); err != nil {
		log.Fatal(err)
	}
	fmt.Println(count, sum)
}
