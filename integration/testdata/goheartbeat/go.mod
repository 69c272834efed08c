module goheartbeat

go 1.26
