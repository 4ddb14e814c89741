package main

import (
	"slices"
	"strconv"
)

// The request each test sends, valkey-benchmark's: `key:<12 digits>` random over the keyspace,
// a dataSize-byte value, containers (`mylist`, `myset`, ...) and MSET's ten keys with the lane's
// {hash tag}, so they spread over a cluster's shards and MSET stays in one slot. In cluster mode
// the keys and the tag are drawn from the lane's shard's slots (keys.go). Keyed by every test of
// BENCHMARK_TESTS (vocabulary/workload.ts); tests/benchmarks/loadgen.test.ts checks the two lists agree.
type request func(b []byte, k *keys) []byte

var (
	bGet, bSet, bIncr      = []byte("GET"), []byte("SET"), []byte("INCR")
	bPing, bLrange, bMset  = []byte("PING"), []byte("LRANGE"), []byte("MSET")
	bSadd, bHset, bZadd    = []byte("SADD"), []byte("HSET"), []byte("ZADD")
	bXadd, bStar, bMyfield = []byte("XADD"), []byte("*"), []byte("myfield")
	bZero, bSpop, bZpopmin = []byte("0"), []byte("SPOP"), []byte("ZPOPMIN")
	pKey, pCounter, pElem  = []byte("key:"), []byte("counter:"), []byte("element:")
	pList, pSet, pHash     = []byte("mylist:"), []byte("myset:"), []byte("myhash:")
	pZset, pStream         = []byte("myzset:"), []byte("mystream:")
	bLpush, bRpush         = []byte("LPUSH"), []byte("RPUSH")
	bLpop, bRpop           = []byte("LPOP"), []byte("RPOP")
)

func listOp(cmd []byte) request {
	return func(b []byte, k *keys) []byte { return appendCommand(b, cmd, k.tagged(pList)) }
}

func pushOp(cmd []byte) request {
	return func(b []byte, k *keys) []byte { return appendCommand(b, cmd, k.tagged(pList), k.value) }
}

func lrange(n int) request {
	last := []byte(strconv.Itoa(n - 1))
	return func(b []byte, k *keys) []byte { return appendCommand(b, bLrange, k.tagged(pList), bZero, last) }
}

func mset(b []byte, k *keys) []byte {
	args := make([][]byte, 0, 21)
	args = append(args, bMset)
	r := k.randomDigits()
	for i := 0; i < 10; i++ {
		key := append(append(append(slices.Clone(k.tagged(pKey)), ':'), r...), ':', byte('0'+i))
		args = append(args, key, k.value)
	}
	return appendCommand(b, args...)
}

var requests = map[string]request{
	"ping_inline": func(b []byte, _ *keys) []byte { return appendCommand(b, bPing) },
	"ping_mbulk":  func(b []byte, _ *keys) []byte { return appendCommand(b, bPing) },
	"set":         func(b []byte, k *keys) []byte { return appendCommand(b, bSet, k.slotKey(pKey), k.value) },
	"get":         func(b []byte, k *keys) []byte { return appendCommand(b, bGet, k.slotKey(pKey)) },
	"incr":        func(b []byte, k *keys) []byte { return appendCommand(b, bIncr, k.slotKey(pCounter)) },
	"lpush":       pushOp(bLpush),
	"rpush":       pushOp(bRpush),
	"lpop":        listOp(bLpop),
	"rpop":        listOp(bRpop),
	"sadd":        func(b []byte, k *keys) []byte { return appendCommand(b, bSadd, k.tagged(pSet), k.element()) },
	"hset":        func(b []byte, k *keys) []byte { return appendCommand(b, bHset, k.tagged(pHash), k.element(), k.value) },
	"spop":        func(b []byte, k *keys) []byte { return appendCommand(b, bSpop, k.tagged(pSet)) },
	"zadd":        func(b []byte, k *keys) []byte { return appendCommand(b, bZadd, k.tagged(pZset), bZero, k.element()) },
	"zpopmin":     func(b []byte, k *keys) []byte { return appendCommand(b, bZpopmin, k.tagged(pZset)) },
	"lrange_100":  lrange(100),
	"lrange_300":  lrange(300),
	"lrange_500":  lrange(500),
	"lrange_600":  lrange(600),
	"mset":        mset,
	"xadd": func(b []byte, k *keys) []byte {
		return appendCommand(b, bXadd, k.tagged(pStream), bStar, bMyfield, k.value)
	},
}

func knownTests() []string {
	out := make([]string, 0, len(requests))
	for t := range requests {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
