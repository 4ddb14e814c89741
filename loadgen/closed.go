package main

import (
	"sync"
	"time"
)

// runClosed is the closed loop (the default): every lane writes `pipeline` requests as one batch
// and writes the next batch once every reply of the previous one has come back, until the
// deadline. Each request's latency runs from the batch's write to the read that completed its
// reply. With Pace, lane i of L writes its k-th batch no earlier than start + (i + k·L)·P / pace:
// the closed loop held to that throughput (the loop comparison's closed side); behind schedule
// it writes at once, never a burst, and still measures from its own write.
func (g *gen) runClosed() time.Duration {
	s := g.spec
	deadline := g.start.Add(time.Duration(s.DurationSeconds * float64(time.Second)))
	var wg sync.WaitGroup
	var mu sync.Mutex
	last := g.start
	for _, l := range g.lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			end := l.closedLoop(deadline)
			mu.Lock()
			if end.After(last) {
				last = end
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return last.Sub(g.start)
}

// closedLoop runs one lane until the deadline and returns when its last batch was answered.
func (l *lane) closedLoop(deadline time.Time) time.Time {
	s := l.g.spec
	lanes, p := int64(len(l.g.lanes)), int64(s.Pipeline)
	last := l.g.start
	for k := int64(0); ; k++ {
		if s.Pace > 0 {
			due := l.g.start.Add(time.Duration(float64(int64(l.id)+k*lanes) * float64(p) / s.Pace * float64(time.Second)))
			if !due.Before(deadline) {
				return last
			}
			time.Sleep(time.Until(due))
		}
		if !time.Now().Before(deadline) {
			return last
		}
		l.rebind()
		if err := l.closedBatch(); err != nil {
			l.failAll(append(l.wb.items, l.rb.items...), err.Error())
			return time.Now()
		}
		last = time.Now()
	}
}

// closedBatch writes one batch (to the write and, when reads are routed, the read connection)
// and reads every reply.
func (l *lane) closedBatch() error {
	p := int64(l.g.spec.Pipeline)
	first := l.g.cursor.Add(p) - p
	l.wb.reset()
	l.rb.reset()
	for i := int64(0); i < p; i++ {
		l.add(first+i, 0)
	}
	sentNs := time.Since(l.g.start).Nanoseconds()
	for _, b := range []*batch{&l.wb, &l.rb} {
		for i := range b.items {
			b.items[i].atNs = sentNs
		}
	}
	for _, x := range []struct {
		k *conn
		b *batch
	}{{l.write, &l.wb}, {l.read, &l.rb}} {
		if len(x.b.items) > 0 {
			if err := x.k.write(x.b.buf); err != nil {
				return err
			}
		}
	}
	if err := l.readReplies(l.write, &l.wb, &l.out); err != nil {
		return err
	}
	if len(l.rb.items) > 0 {
		if err := l.readReplies(l.read, &l.rb, &l.out); err != nil {
			return err
		}
	}
	l.record(&l.out)
	return nil
}
