// Command pause is the cluster's Pod sandbox ("pause") process: it holds the Pod's namespaces and
// sleeps until SIGTERM or SIGINT, then exits 0. It also reaps zombies, as it is PID 1 of the Pod
// when the Pod shares its process namespace.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
