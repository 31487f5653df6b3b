package main

import (
	"net/http"
	"net/http/pprof"
)

// mountPprof serves Go's profiles at /debug/pprof/ on mux (the metrics
// listener, never the main one): the index, cmdline, profile (CPU),
// symbol, trace and every named profile (heap, allocs, goroutine, ...).
// The package's init also registers them on http.DefaultServeMux, which
// the program never serves.
func mountPprof(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}
