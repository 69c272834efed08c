module goroutines

go 1.26
