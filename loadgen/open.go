package main

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// The open loop (`rate`): request k is due at start + k / rate whatever the server does, and its
// latency runs from that intended time, so a stall's queued requests count their wait. One
// dispatcher sends, at each wake, every request due by then as one batch on the next lane in
// turn, then sleeps until the next request is due but at least minSleep: a batch holds at most
// that much of the schedule (more when the dispatcher fell behind). How late requests left
// (actual - intended) is reported, so a reader can tell the generator's share of the latencies.
// Each connection has a reader that takes the replies in order. Lanes keep their servers: a
// request whose slot moved is re-sent where MOVED/ASK says.
const (
	minSleep      = 100 * time.Microsecond
	maxBatchItems = 4096
	queuedBatches = 1 << 14
)

type openBatch struct {
	b batch
}

type openConn struct {
	k     *conn
	queue chan *openBatch
}

type openStats struct {
	sent        int64
	lagMaxNs    int64
	lagSumNs    float64
	outstanding atomic.Int64
	lastReplyNs atomic.Int64
}

func (g *gen) runOpen() (time.Duration, *openStats) {
	s := g.spec
	st := &openStats{}
	conns := make([][]*openConn, len(g.lanes))
	var readers sync.WaitGroup
	pool := sync.Pool{New: func() any { return &openBatch{} }}
	for i, l := range g.lanes {
		for _, k := range []*conn{l.write, l.read} {
			if k == nil {
				continue
			}
			oc := &openConn{k: k, queue: make(chan *openBatch, queuedBatches)}
			conns[i] = append(conns[i], oc)
			readers.Add(1)
			go func() {
				defer readers.Done()
				l.openReader(oc, st, &pool)
			}()
		}
	}
	g.dispatch(conns, st, &pool)
	for _, cs := range conns {
		for _, oc := range cs {
			close(oc.queue)
		}
	}
	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Duration(s.DrainMs) * time.Millisecond):
		// Unanswered requests: the readers' connections close under them, and they count what
		// is left as errors, saying why.
		g.drainExpired.Store(true)
		g.closeAll()
		<-done
	}
	end := time.Duration(st.lastReplyNs.Load())
	if end == 0 {
		end = time.Since(g.start)
	}
	return end, st
}

// dispatch sends the schedule's requests on time, lane after lane.
func (g *gen) dispatch(conns [][]*openConn, st *openStats, pool *sync.Pool) {
	s := g.spec
	total := int64(math.Floor(s.Rate * s.DurationSeconds))
	intended := func(k int64) int64 { return int64(float64(k) * 1e9 / s.Rate) }
	next := 0
	for k := int64(0); k < total; {
		now := time.Since(g.start).Nanoseconds()
		due := min(total, int64(math.Floor(float64(now)*s.Rate/1e9))+1)
		for k < due {
			i, ok := g.nextLiveLane(&next)
			if !ok {
				return
			}
			n := min(due-k, maxBatchItems)
			g.lanes[i].openSend(conns[i], k, n, intended, st, pool)
			k += n
		}
		if k < total {
			time.Sleep(max(time.Duration(intended(k)-time.Since(g.start).Nanoseconds()), minSleep))
		}
	}
}

func (g *gen) nextLiveLane(next *int) (int, bool) {
	for tries := 0; tries < len(g.lanes); tries++ {
		i := *next % len(g.lanes)
		*next++
		if !g.lanes[i].dead.Load() {
			return i, true
		}
	}
	return 0, false
}

// openSend builds requests k..k+n-1 (due at intended(k)...) and writes them, queueing each
// connection's batch for its reader first.
func (l *lane) openSend(cs []*openConn, k, n int64, intended func(int64) int64, st *openStats, pool *sync.Pool) {
	l.wb.reset()
	l.rb.reset()
	for j := k; j < k+n; j++ {
		l.add(j, intended(j))
	}
	now := time.Since(l.g.start).Nanoseconds()
	for _, b := range []*batch{&l.wb, &l.rb} {
		for _, it := range b.items {
			lag := now - it.atNs
			st.lagMaxNs = max(st.lagMaxNs, lag)
			st.lagSumNs += float64(lag)
		}
	}
	st.sent += n
	for _, oc := range cs {
		b := &l.wb
		if oc.k == l.read {
			b = &l.rb
		}
		if len(b.items) == 0 {
			continue
		}
		ob := pool.Get().(*openBatch)
		ob.b.buf = append(ob.b.buf[:0], b.buf...)
		ob.b.items = append(ob.b.items[:0], b.items...)
		st.outstanding.Add(int64(len(ob.b.items)))
		oc.queue <- ob
		if err := oc.k.write(ob.b.buf); err != nil {
			l.dead.Store(true)
		}
	}
}

// openReader takes the replies of one connection in the order its batches were queued.
func (l *lane) openReader(oc *openConn, st *openStats, pool *sync.Pool) {
	var out []outcome
	for ob := range oc.queue {
		if l.dead.Load() {
			l.failOpen(ob, st, "connection lost earlier")
			pool.Put(ob)
			continue
		}
		if err := l.readReplies(oc.k, &ob.b, &out); err != nil {
			why := err.Error()
			if l.g.drainExpired.Load() {
				why = fmt.Sprintf("no reply within %d ms of the last send", l.g.spec.DrainMs)
			}
			// The replies read before the failure count; the rest of the batch does not.
			read := len(out)
			st.outstanding.Add(-int64(read))
			l.record(&out)
			l.dead.Store(true)
			l.failOpen(&openBatch{b: batch{items: ob.b.items[read:]}}, st, why)
			pool.Put(ob)
			continue
		}
		st.outstanding.Add(-int64(len(out)))
		st.replied(time.Since(l.g.start).Nanoseconds())
		l.record(&out)
		pool.Put(ob)
	}
}

func (l *lane) failOpen(ob *openBatch, st *openStats, why string) {
	st.outstanding.Add(-int64(len(ob.b.items)))
	s := l.g.rec.shard(l.id)
	s.mu.Lock()
	for _, it := range ob.b.items {
		s.fail(it.test, why)
	}
	s.mu.Unlock()
}

// replied moves the last reply's time forward (readers race: the latest wins).
func (st *openStats) replied(ns int64) {
	for {
		old := st.lastReplyNs.Load()
		if ns <= old || st.lastReplyNs.CompareAndSwap(old, ns) {
			return
		}
	}
}
