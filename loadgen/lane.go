package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// lane is one client connection of the workload (valkey-benchmark's -c): its connection to the
// server it writes to, the one it reads from when reads go to a replica, and its keys.
type lane struct {
	g     *gen
	id    int
	keys  *keys
	slots *slotMap // the map this lane is bound to (cluster)
	write *conn
	read  *conn // nil: reads go to write
	// mu guards conns and a redirect's exchange (the open loop's two readers may redirect at once).
	mu    sync.Mutex
	conns map[string]*conn
	wb    batch // requests to write, then to read
	rb    batch
	out   []outcome
	dead  atomic.Bool
}

// batch is the requests of one write: their bytes and where each ends.
type batch struct {
	buf   []byte
	items []item
}

type item struct {
	test int
	end  int
	atNs int64 // intended (open loop) or actual (closed loop) send time, since the run's start
}

func (b *batch) reset() { b.buf, b.items = b.buf[:0], b.items[:0] }

// bytesOf: the request bytes of item i (for a redirect).
func (b *batch) bytesOf(i int) []byte {
	start := 0
	if i > 0 {
		start = b.items[i-1].end
	}
	return b.buf[start:b.items[i].end]
}

// outcome of one request, recorded after the batch is read (the shard's lock is taken once).
type outcome struct {
	test      int
	latencyUs int64
	atNs      int64
	err       string
}

func newLane(g *gen, id int) *lane {
	k := newKeys(id, g.spec.Keyspace, g.spec.DataSize, g.seed)
	k.sameSlot = g.spec.KeyShape == "tagged"
	return &lane{g: g, id: id, keys: k, conns: map[string]*conn{}}
}

func (l *lane) conn(addr string, readonly bool) (*conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.connLocked(addr, readonly, "")
}

// connLocked: the lane's connection to addr for a purpose ("" the load, "redirect" re-sent requests).
func (l *lane) connLocked(addr string, readonly bool, purpose string) (*conn, error) {
	key := addr + "/" + purpose
	if readonly {
		key += "/readonly"
	}
	if k, ok := l.conns[key]; ok {
		return k, nil
	}
	k, err := dial(addr, l.g.spec.Password, readonly, l.g.timeout)
	if err != nil {
		return nil, err
	}
	l.conns[key] = k
	return k, nil
}

// open binds the lane: standalone to the target (and a read target), cluster to shard id % n.
func (l *lane) open() error {
	s := l.g.spec
	var err error
	if s.Mode == "standalone" {
		if l.write, err = l.conn(s.Target, false); err != nil {
			return err
		}
		if n := len(s.ReadTargets); n > 0 {
			l.read, err = l.conn(s.ReadTargets[l.id%n], false)
		}
		return err
	}
	return l.bind(l.g.slots.Load())
}

func (l *lane) bind(m *slotMap) error {
	shard := l.id % len(m.shards)
	sh := m.shards[shard]
	w, err := l.conn(sh.primary, false)
	if err != nil {
		return err
	}
	var r *conn
	if l.g.spec.ReadsFromReplicas && len(sh.replicas) > 0 {
		if r, err = l.conn(sh.replicas[(l.id/len(m.shards))%len(sh.replicas)], true); err != nil {
			return err
		}
	}
	l.slots, l.write, l.read = m, w, r
	l.keys.bind(m, int16(shard))
	return nil
}

// rebind follows a new slot map (after a MOVED); a lane that cannot is left on its old servers.
func (l *lane) rebind() {
	if m := l.g.slots.Load(); m != nil && m != l.slots {
		_ = l.bind(m)
	}
}

// add appends one request of schedule slot `slot` to the batch its command is routed to.
func (l *lane) add(slot int64, atNs int64) {
	t := l.g.sched[slot%int64(len(l.g.sched))]
	b := &l.wb
	if l.read != nil && l.g.isRead[t] {
		b = &l.rb
	}
	b.buf = l.g.reqs[t](b.buf, l.keys)
	b.items = append(b.items, item{test: t, end: len(b.buf), atNs: atNs})
}

// readReplies reads the replies of b from k, following redirects, into out.
func (l *lane) readReplies(k *conn, b *batch, out *[]outcome) error {
	for i, it := range b.items {
		errText, err := k.rd.skipReply()
		if err != nil {
			return fmt.Errorf("connection to %s: %w", k.addr, err)
		}
		arrived := k.rd.arrived
		if errText != "" {
			if errText, arrived, err = l.redirect(errText, b.bytesOf(i), arrived); err != nil {
				return err
			}
		}
		*out = append(*out, outcome{test: it.test, latencyUs: arrived.Sub(l.g.start).Microseconds() - it.atNs/1000, atNs: it.atNs, err: errText})
	}
	return nil
}

// redirect re-sends a request answered MOVED or ASK to the server named, up to 5 times, on a
// connection kept for re-sent requests, and returns the final reply's error text and arrival
// time. A MOVED also refreshes the slot map (the closed loop's lanes then rebind).
func (l *lane) redirect(errText string, req []byte, arrived time.Time) (string, time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for hops := 0; hops < 5; hops++ {
		ask, addr, ok := parseRedirect(errText)
		if !ok {
			return errText, arrived, nil
		}
		k, err := l.connLocked(addr, false, "redirect")
		if err != nil {
			return "", arrived, err
		}
		out := req
		if ask {
			l.g.redirects.ask.Add(1)
			out = append(appendCommand(nil, []byte("ASKING")), req...)
		} else {
			l.g.redirects.moved.Add(1)
			l.g.refreshSlots()
		}
		if err := k.write(out); err != nil {
			return "", arrived, err
		}
		if ask {
			if _, err := k.rd.skipReply(); err != nil {
				return "", arrived, err
			}
		}
		if errText, err = k.rd.skipReply(); err != nil {
			return "", arrived, err
		}
		arrived = k.rd.arrived
		if errText == "" {
			return "", arrived, nil
		}
	}
	return errText, arrived, nil
}

// record the outcomes under the lane's shard lock, once.
func (l *lane) record(out *[]outcome) {
	s := l.g.rec.shard(l.id)
	s.mu.Lock()
	for _, o := range *out {
		if o.err != "" {
			s.fail(o.test, o.err)
		} else {
			s.reply(l.g.rec, o.test, o.latencyUs, o.atNs)
		}
	}
	s.mu.Unlock()
	*out = (*out)[:0]
}

// failAll: the lane's connection broke; its unanswered requests count as errors with why.
func (l *lane) failAll(items []item, why string) {
	l.dead.Store(true)
	s := l.g.rec.shard(l.id)
	s.mu.Lock()
	for _, it := range items {
		s.fail(it.test, why)
	}
	s.mu.Unlock()
}

func (l *lane) closeConns() {
	for _, k := range l.conns {
		k.close()
	}
}

// bytes written and read over all of the lane's connections.
func (l *lane) bytes() (written, read int64) {
	for _, k := range l.conns {
		written += k.written
		read += k.rd.bytes
	}
	return
}
