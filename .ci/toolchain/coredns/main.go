// CoreDNS for the local real cluster (kube:local), built by ../install.sh with only the plugins its
// Corefile uses. There is no `forward` plugin (nor hosts, file, etcd, cloud DNS or any other source
// of names outside the cluster): the cluster DNS answers cluster names and nothing else, by
// construction.
//
// This is CoreDNS's own main package (coredns.go of github.com/coredns/coredns) with its generated
// plugin list (core/plugin/zplugin.go) and directive order (core/dnsserver/zdirectives.go, from
// plugin.cfg) cut down to the plugins below, kept in plugin.cfg's relative order, the way
// https://coredns.io/2017/07/25/compile-time-enabling-or-disabling-plugins/ describes.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func init() {
	dnsserver.Directives = []string{"reload", "ready", "health", "errors", "log", "loadbalance", "cache", "kubernetes"}
}

func main() {
	coremain.Run()
}
