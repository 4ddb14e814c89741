package main

import (
	"math/rand/v2"
	"strconv"
)

// keys draws a lane's keys. In cluster mode a lane belongs to one shard and draws only keys whose
// slot that shard serves (uniformly over the keyspace's keys of that shard), so a lane's
// pipelined batch is one write to one server, as in valkey-benchmark's cluster mode; the lanes
// are spread evenly over the shards. In standalone mode every key of the keyspace is drawn.
type keys struct {
	rng      *rand.Rand
	keyspace int
	value    []byte
	lane     int
	// m: the current slot map, nil in standalone mode (owner: its slot -> shard); shard: this lane's.
	m           *slotMap
	owner       *[16384]int16
	shard       int16
	mine        map[string][]int32 // per key prefix, this shard's key numbers (nil: drawn and rejected)
	sameSlot    bool               // keyShape "tagged": the shard's keys all carry its tag
	tag         []byte             // "{tag}", a tag whose slot this lane's shard serves
	taggedCache map[string][]byte
	// scratch buffers, one per kind of key so that one request may hold several at once.
	key, elem, digits []byte
}

const maxDraws = 256

func newKeys(lane, keyspace, dataSize int, seed uint64) *keys {
	v := make([]byte, dataSize)
	for i := range v {
		v[i] = 'x'
	}
	k := &keys{rng: rand.New(rand.NewPCG(seed, uint64(lane))), keyspace: keyspace, value: v, lane: lane}
	k.bind(nil, 0)
	return k
}

// bind sets the slot map and shard this lane draws for (nil: standalone).
func (k *keys) bind(m *slotMap, shard int16) {
	k.m, k.owner, k.shard, k.mine = m, nil, shard, map[string][]int32{}
	if m != nil {
		k.owner = &m.owner
	}
	owner := k.owner
	k.taggedCache = map[string][]byte{}
	base := strconv.Itoa(k.lane)
	k.tag = []byte("{" + base + "}")
	if owner == nil {
		return
	}
	for i := 0; i < 1<<20; i++ {
		t := base + "-" + strconv.Itoa(i)
		if owner[crc16([]byte(t))&16383] == shard {
			k.tag = []byte("{" + t + "}")
			return
		}
	}
}

// randomDigits: a key number over the keyspace, as valkey-benchmark's 12-digit __rand_int__.
func (k *keys) randomDigits() []byte {
	k.digits = appendDigits(k.digits[:0], k.rng.IntN(k.keyspace))
	return k.digits
}

// pairs: "00" to "99", two digits per division.
const pairs = "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849" +
	"5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

func appendDigits(b []byte, n int) []byte {
	var d [12]byte
	for i := 10; i >= 0; i -= 2 {
		q := n / 100
		r := (n - q*100) * 2
		d[i], d[i+1] = pairs[r], pairs[r+1]
		n = q
	}
	return append(b, d[:]...)
}

// slotKey: prefix + 12 digits, drawn uniformly from the keys whose slot is this lane's shard's
// (from the map's key lists, or drawn until one is).
func (k *keys) slotKey(prefix []byte) []byte {
	if k.m != nil && k.sameSlot {
		k.key = appendDigits(append(append(append(k.key[:0], prefix...), k.tag...), ':'), k.rng.IntN(k.keyspace))
		return k.key
	}
	if k.m != nil {
		mine, ok := k.mine[string(prefix)]
		if !ok {
			if l := k.m.keyLists(prefix, k.keyspace); l != nil {
				mine = l[k.shard]
			}
			k.mine[string(prefix)] = mine
		}
		if len(mine) > 0 {
			k.key = appendDigits(append(k.key[:0], prefix...), int(mine[k.rng.IntN(len(mine))]))
			return k.key
		}
	}
	for i := 0; ; i++ {
		k.key = appendDigits(append(k.key[:0], prefix...), k.rng.IntN(k.keyspace))
		if k.owner == nil || i >= maxDraws || k.owner[crc16(k.key)&16383] == k.shard {
			return k.key
		}
	}
}

// element: `element:` + 12 digits (a member of a tagged container: no slot of its own).
func (k *keys) element() []byte {
	k.elem = appendDigits(append(k.elem[:0], pElem...), k.rng.IntN(k.keyspace))
	return k.elem
}

// tagged: prefix + {tag}, cached.
func (k *keys) tagged(prefix []byte) []byte {
	if t, ok := k.taggedCache[string(prefix)]; ok {
		return t
	}
	t := append(append([]byte{}, prefix...), k.tag...)
	k.taggedCache[string(prefix)] = t
	return t
}

var crcTable = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for j := 0; j < 8; j++ {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return
}()

// crc16 is CRC16-CCITT (XMODEM), the cluster's key hash; of the part in {} when there is one.
func crc16(key []byte) uint16 {
	if s := indexByte(key, '{'); s >= 0 {
		if e := indexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	var c uint16
	for _, b := range key {
		c = c<<8 ^ crcTable[byte(c>>8)^b]
	}
	return c
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}
