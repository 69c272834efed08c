// Package mapfile reads a file through a read-only mapping of it: an
// io.ReaderAt over the page cache's own pages, for a reader that reads a
// few scattered parts of a large file (an executable's headers, jump
// tables and exception tables). Reading such a file whole into the heap
// costs a fresh page per 4 KB, and fresh memory is dear on a virtual
// machine (2.4 MB: 4 to 9 ms, against about 1 ms to map it and touch
// every page).
//
// A read is guarded: a file cut short under the mapping (SIGBUS at a read
// past its new end) is an error of that read, never a crash. The mapping
// is released when the File is garbage.
//
// Files:
//
//	mapfile.go       File, ReadAt, Size, the fault guard
//	map_unix.go      the mapping (mmap), on Unix
//	map_other.go     elsewhere, the file read whole
package mapfile
