package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Spec is what to run, read as JSON from stdin (never argv: it holds the password). The Node side
// builds it (benchmarks/run/loadgen.ts) from the workload.
type Spec struct {
	// "standalone" (one server, or a replication primary / write endpoint) or "cluster" (a seed).
	Mode   string `json:"mode"`
	Target string `json:"target"`
	// Standalone reads on the replicas: lane i sends its read commands to ReadTargets[i % n].
	ReadTargets []string `json:"readTargets"`
	// Cluster reads on the replicas: each lane reads from a replica of its shard (READONLY).
	ReadsFromReplicas bool   `json:"readsFromReplicas"`
	Password          string `json:"password"`
	// Connections (lanes) and, closed loop, requests in flight on each (one batch).
	Connections int `json:"connections"`
	Pipeline    int `json:"pipeline"`
	// The mix's order of tests, cycled by one shared cursor (mixSchedule in mix-runner.ts).
	Schedule []string `json:"schedule"`
	// Tests whose commands may be served by a replica (READ_TESTS in vocabulary/workload.ts).
	ReadTests       []string `json:"readTests"`
	Keyspace        int      `json:"keyspace"`
	DataSize        int      `json:"dataSize"`
	DurationSeconds float64  `json:"durationSeconds"`
	// Open loop: requests per second in total, latency from each request's intended send time.
	Rate float64 `json:"rate"`
	// Closed loop held to this many requests per second in total.
	Pace float64 `json:"pace"`
	// Cluster keys: "spread" (default: uniform over every slot of the lane's shard) or "tagged"
	// (valkey-benchmark's: `key:{<tag of the shard>}:<digits>`, every key of a shard in one slot;
	// npm run bench:loadgen uses it so both clients ask the servers the same work).
	KeyShape string `json:"keyShape"`
	// Soak: a window line every WindowSeconds (start + k x WindowSeconds).
	WindowSeconds    float64 `json:"windowSeconds"`
	DrainMs          int     `json:"drainMs"`
	ConnectTimeoutMs int     `json:"connectTimeoutMs"`
}

// specError: the spec is invalid (exit code 2).
type specError struct{ msg string }

func (e specError) Error() string { return "spec: " + e.msg }

func readSpec(r io.Reader) (*Spec, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	s := &Spec{}
	if err := dec.Decode(s); err != nil {
		return nil, specError{fmt.Sprintf("not the expected JSON: %v", err)}
	}
	if s.DrainMs == 0 {
		s.DrainMs = 30000
	}
	if s.ConnectTimeoutMs == 0 {
		s.ConnectTimeoutMs = 5000
	}
	return s, s.validate()
}

func (s *Spec) validate() error {
	bad := func(f string, a ...any) error { return specError{fmt.Sprintf(f, a...)} }
	switch {
	case s.Mode != "standalone" && s.Mode != "cluster":
		return bad("mode must be standalone or cluster, got %q", s.Mode)
	case !strings.Contains(s.Target, ":"):
		return bad("target must be host:port, got %q", s.Target)
	case s.Connections < 1:
		return bad("connections must be >= 1, got %d", s.Connections)
	case s.Pipeline < 1:
		return bad("pipeline must be >= 1, got %d", s.Pipeline)
	case len(s.Schedule) == 0:
		return bad("schedule is empty")
	case s.Keyspace < 1:
		return bad("keyspace must be >= 1, got %d", s.Keyspace)
	case s.DataSize < 1:
		return bad("dataSize must be >= 1, got %d", s.DataSize)
	case !(s.DurationSeconds > 0):
		return bad("durationSeconds must be > 0, got %v", s.DurationSeconds)
	case s.Rate < 0 || s.Pace < 0 || s.WindowSeconds < 0:
		return bad("rate, pace and windowSeconds must not be negative")
	case s.Rate > 0 && s.Pace > 0:
		return bad("rate (open loop) and pace (closed loop) exclude each other")
	case s.Mode == "cluster" && len(s.ReadTargets) > 0:
		return bad("readTargets are for standalone mode; a cluster reads from its shards' replicas (readsFromReplicas)")
	case s.KeyShape != "" && s.KeyShape != "spread" && s.KeyShape != "tagged":
		return bad("keyShape must be spread or tagged, got %q", s.KeyShape)
	case s.Mode == "standalone" && s.ReadsFromReplicas:
		return bad("readsFromReplicas is for cluster mode; standalone reads go to readTargets")
	}
	for _, t := range s.Schedule {
		if _, ok := requests[t]; !ok {
			return bad("unknown test %q in schedule (known: %s)", t, strings.Join(knownTests(), ","))
		}
	}
	for _, t := range s.ReadTests {
		if _, ok := requests[t]; !ok {
			return bad("unknown test %q in readTests", t)
		}
	}
	return nil
}
