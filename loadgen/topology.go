package main

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"
)

// shardInfo is one primary and its replicas, as CLUSTER SLOTS lists them (host:port each).
type shardInfo struct {
	primary  string
	replicas []string
}

// slotMap is a cluster's slot ownership: shards ordered by their lowest slot (so lane i keeps
// shard i % n across refreshes while the slots stay), owner[slot] the shard index (-1: none).
type slotMap struct {
	shards []shardInfo
	owner  [16384]int16
	// per key prefix, per shard: the key numbers of the keyspace whose slot the shard serves.
	mu    sync.Mutex
	lists map[string][][]int32
}

// maxListedKeyspace: above it keys are drawn and rejected until one is the shard's (no lists).
const maxListedKeyspace = 1 << 24

// keyLists: for `prefix` + 12 digits, the key numbers of each shard (computed once per map and
// prefix, shared by every lane); nil when the keyspace is too large to list.
func (m *slotMap) keyLists(prefix []byte, keyspace int) [][]int32 {
	if keyspace > maxListedKeyspace {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.lists[string(prefix)]; ok {
		return l
	}
	l := make([][]int32, len(m.shards))
	key := append([]byte{}, prefix...)
	for n := 0; n < keyspace; n++ {
		key = appendDigits(key[:len(prefix)], n)
		if s := m.owner[crc16(key)&16383]; s >= 0 {
			l[s] = append(l[s], int32(n))
		}
	}
	if m.lists == nil {
		m.lists = map[string][][]int32{}
	}
	m.lists[string(prefix)] = l
	return l
}

// fetchSlotMap asks the addresses in turn (CLUSTER SLOTS) until one answers.
func fetchSlotMap(addrs []string, password string, timeout time.Duration) (*slotMap, error) {
	var last error
	for _, a := range addrs {
		k, err := dial(a, password, false, timeout)
		if err != nil {
			if _, ok := err.(authError); ok {
				return nil, err
			}
			last = err
			continue
		}
		v, err := k.call(timeout, "CLUSTER", "SLOTS")
		k.close()
		if err != nil {
			last = err
			continue
		}
		if v.err != "" {
			return nil, connectError{fmt.Sprintf("%s: CLUSTER SLOTS: %s (is it a cluster?)", a, v.err)}
		}
		host, _, _ := net.SplitHostPort(a)
		return parseSlots(v, host)
	}
	return nil, last
}

// parseSlots reads CLUSTER SLOTS: [start, end, [host, port, id, ...], [replica...] ...] per range.
// An empty or "?" host (an unknown endpoint) is the host of the server that answered.
func parseSlots(v value, askedHost string) (*slotMap, error) {
	m := &slotMap{}
	for i := range m.owner {
		m.owner[i] = -1
	}
	type rng struct {
		lo, hi int
		nodes  []string
	}
	var ranges []rng
	for _, e := range v.array {
		if len(e.array) < 3 {
			return nil, fmt.Errorf("CLUSTER SLOTS: a range without a primary: %+v", e)
		}
		r := rng{lo: int(e.array[0].num), hi: int(e.array[1].num)}
		for _, n := range e.array[2:] {
			if len(n.array) < 2 {
				return nil, fmt.Errorf("CLUSTER SLOTS: a node without host and port: %+v", n)
			}
			h := n.array[0].str
			if h == "" || h == "?" {
				h = askedHost
			}
			r.nodes = append(r.nodes, net.JoinHostPort(h, strconv.FormatInt(n.array[1].num, 10)))
		}
		ranges = append(ranges, r)
	}
	slices.SortFunc(ranges, func(a, b rng) int { return a.lo - b.lo })
	index := map[string]int16{}
	for _, r := range ranges {
		if r.lo < 0 || r.hi > 16383 || r.lo > r.hi {
			return nil, fmt.Errorf("CLUSTER SLOTS: range %d-%d out of 0-16383", r.lo, r.hi)
		}
		s, ok := index[r.nodes[0]]
		if !ok {
			s = int16(len(m.shards))
			index[r.nodes[0]] = s
			m.shards = append(m.shards, shardInfo{primary: r.nodes[0], replicas: r.nodes[1:]})
		}
		for slot := r.lo; slot <= r.hi; slot++ {
			m.owner[slot] = s
		}
	}
	if len(m.shards) == 0 {
		return nil, fmt.Errorf("CLUSTER SLOTS lists no slot: the cluster serves nothing")
	}
	return m, nil
}

// addrs: every primary of the map, then the seed (where to ask for the next map).
func (m *slotMap) addrs(seed string) []string {
	out := make([]string, 0, len(m.shards)+1)
	for _, s := range m.shards {
		out = append(out, s.primary)
	}
	return append(out, seed)
}
