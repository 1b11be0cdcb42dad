module letitcrash/conformance/go/shutdown

go 1.19
