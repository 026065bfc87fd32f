package main

import (
	"net"
)

// checkMetricsAddr checks --metrics-addr: HOST:PORT, on loopback unless public.
func checkMetricsAddr(addr string, public bool) error {
	return checkListenAddr("--metrics-addr", addr, "127.0.0.1:9464", public, "pass --metrics-public to serve the metrics there")
}

// checkListenAddr checks a listen address given by flag: HOST:PORT (example shows one), on
// loopback unless public; notPublic says how to listen elsewhere.
func checkListenAddr(flag, addr, example string, public bool, notPublic string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("%s %q: %v (want HOST:PORT, e.g. %s)", flag, addr, err, example)
	}
	if ip := net.ParseIP(host); !public && (ip == nil || !ip.IsLoopback()) && host != "localhost" {
		return usagef("%s %q is not a loopback address; %s", flag, addr, notPublic)
	}
	return nil
}
