package main

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// gen is one run: the spec, the shared schedule cursor, the slot map, the recorder, the lanes.
type gen struct {
	spec    *Spec
	sched   []int     // test index per schedule slot
	reqs    []request // per test index
	isRead  []bool    // per test index: routed to a replica / read target when reads go there
	cursor  atomic.Int64
	slots   atomic.Pointer[slotMap] // nil in standalone mode
	rec     *recorder
	lanes   []*lane
	start   time.Time
	timeout time.Duration
	// the open loop's drain ran out: what is still unanswered counts as errors, saying so.
	drainExpired atomic.Bool
	// single-flight refresh of the slot map after a MOVED.
	refreshing atomic.Bool
	redirects  struct{ moved, ask atomic.Int64 }
	seed       uint64
}

func newGen(s *Spec) *gen {
	g := &gen{spec: s, timeout: time.Duration(s.ConnectTimeoutMs) * time.Millisecond, seed: uint64(time.Now().UnixNano())}
	index := map[string]int{}
	var tests []string
	for _, t := range s.Schedule {
		if _, ok := index[t]; !ok {
			index[t] = len(tests)
			tests = append(tests, t)
		}
		g.sched = append(g.sched, index[t])
	}
	for _, t := range tests {
		g.reqs = append(g.reqs, requests[t])
	}
	g.isRead = make([]bool, len(tests))
	for _, t := range s.ReadTests {
		if i, ok := index[t]; ok {
			g.isRead[i] = true
		}
	}
	var bucket int64
	if s.Rate > 0 {
		bucket = seriesBucketNs(s.DurationSeconds)
	}
	g.rec = newRecorder(tests, max(4, 2*runtime.GOMAXPROCS(0)), bucket, s.WindowSeconds > 0)
	return g
}

// seriesBucketNs: one point per second up to 600 s, then coarser so a series has at most 600 points.
func seriesBucketNs(durationS float64) int64 {
	s := int64(1)
	for float64(s)*600 < durationS {
		s++
	}
	return s * int64(time.Second)
}

func (g *gen) readsRouted() bool { return len(g.spec.ReadTargets) > 0 || g.spec.ReadsFromReplicas }

// connect fetches the slot map (cluster) and opens every lane's connections.
func (g *gen) connect() error {
	if g.spec.Mode == "cluster" {
		m, err := fetchSlotMap([]string{g.spec.Target}, g.spec.Password, g.timeout)
		if err != nil {
			return err
		}
		if g.spec.ReadsFromReplicas {
			for _, sh := range m.shards {
				if len(sh.replicas) == 0 {
					return connectError{fmt.Sprintf("reads on the replicas: the shard of primary %s has no replica in CLUSTER SLOTS", sh.primary)}
				}
			}
		}
		// The shards' key lists now, before the clock starts: computed on the first request they
		// would hold up the open loop's dispatcher (a million keys take a few hundred ms).
		for _, prefix := range [][]byte{pKey, pCounter} {
			m.keyLists(prefix, g.spec.Keyspace)
		}
		g.slots.Store(m)
	}
	errs := make([]error, g.spec.Connections)
	g.lanes = make([]*lane, g.spec.Connections)
	var wg sync.WaitGroup
	for i := range g.lanes {
		g.lanes[i] = newLane(g, i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = g.lanes[i].open()
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			g.closeAll()
			return err
		}
	}
	return nil
}

func (g *gen) closeAll() {
	for _, l := range g.lanes {
		if l != nil {
			l.closeConns()
		}
	}
}

// refreshSlots fetches a new slot map in the background after a MOVED (one at a time).
func (g *gen) refreshSlots() {
	if g.slots.Load() == nil || !g.refreshing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer g.refreshing.Store(false)
		if m, err := fetchSlotMap(g.slots.Load().addrs(g.spec.Target), g.spec.Password, g.timeout); err == nil {
			g.slots.Store(m)
		}
	}()
}

// parseRedirect reads `MOVED <slot> <host:port>` / `ASK <slot> <host:port>`.
func parseRedirect(errText string) (ask bool, addr string, ok bool) {
	f := strings.Fields(errText)
	if len(f) != 3 || (f[0] != "MOVED" && f[0] != "ASK") {
		return false, "", false
	}
	return f[0] == "ASK", f[2], true
}
