module target

go 1.26
