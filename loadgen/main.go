// vload is valkey-on-eks's load generator: the mixes, the open loop, soaks, the loop comparison,
// reads from the replicas and the latency-target sweep run on it (docs/report-and-sweep.md, "The
// load generator", says why a compiled generator and how it compares with valkey-benchmark).
//
//	vload run          reads a Spec (JSON) on stdin, runs it, writes JSON lines on stdout
//	vload tests        the tests it can send, one a line
//	vload install DIR  copies itself to DIR/vload (a pod's init container hands it over)
//	vload version
//
// Output lines: {"type":"ready",...} once connected, {"type":"window",...} per soak window,
// {"type":"result",...} at the end. Exit codes: 0 ran (error replies are in the result), 1 failed
// while running, 2 bad spec or arguments, 3 the server refused the password, 4 a server could not be
// reached or is not what the spec says (no cluster, no replica).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
)

// version is set at build time (-ldflags "-X main.version=..."): the hash of these sources.
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 {
		cmd = args[0]
	}
	switch {
	case cmd == "tests":
		fmt.Fprintln(stdout, strings.Join(knownTests(), "\n"))
		return 0
	case cmd == "version":
		fmt.Fprintln(stdout, version)
		return 0
	case cmd == "install" && len(args) == 2:
		if err := install(args[1]); err != nil {
			fmt.Fprintf(stderr, "vload: install: %v\n", err)
			return 1
		}
		return 0
	case cmd == "run" && len(args) <= 1:
		return runSpec(stdin, stdout, stderr)
	}
	fmt.Fprintf(stderr, "vload: unknown command %q (run | tests | install DIR | version)\n", strings.Join(args, " "))
	return 2
}

func runSpec(stdin io.Reader, stdout, stderr io.Writer) int {
	// VLOAD_CPUPROFILE=FILE: a Go CPU profile of the run (go tool pprof), to see where the
	// generator's own time goes.
	if path := os.Getenv("VLOAD_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	spec, err := readSpec(stdin)
	if err == nil {
		w := bufio.NewWriter(stdout)
		err = execute(spec, &lineWriter{w: w})
		_ = w.Flush()
	}
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "vload: %v\n", err)
	var se specError
	var ae authError
	var ce connectError
	switch {
	case errors.As(err, &se):
		return 2
	case errors.As(err, &ae):
		return 3
	case errors.As(err, &ce):
		return 4
	}
	return 1
}

// lineWriter writes one JSON object a line, flushed at once (the Node side reads them as they come).
type lineWriter struct {
	w *bufio.Writer
}

func (lw *lineWriter) line(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := lw.w.Write(append(b, '\n')); err != nil {
		return err
	}
	return lw.w.Flush()
}

func install(dir string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	b, err := os.ReadFile(self)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "vload"), b, 0o755)
}
