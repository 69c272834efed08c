module github.com/patchprof/patchprof

go 1.26.8

require (
	github.com/go-delve/delve v1.27.2
	github.com/google/pprof v0.0.0-20261105003125-4bf881d7fb0b
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
	golang.org/x/arch v0.33.0
	golang.org/x/sys v0.50.0
)

require golang.org/x/telemetry v0.0.0-20241106142447-58a1122356f5 // indirect
