module gopreemptcalls

go 1.26
