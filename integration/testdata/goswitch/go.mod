module goswitch

go 1.26
