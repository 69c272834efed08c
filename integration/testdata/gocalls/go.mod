module gocalls

go 1.26
