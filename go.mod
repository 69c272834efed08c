module github.com/patchprof/patchprof

go 1.26.8

require (
	github.com/go-delve/delve v1.27.2 // indirect
	golang.org/x/arch v0.33.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/telemetry v0.0.0-20241106142447-58a1122356f5 // indirect
)
