module letitcrash/conformance/go/channels

go 1.19
