module gopreempt

go 1.26
