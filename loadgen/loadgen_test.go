package main

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// pipeConn feeds a reply reader from a byte string, a few bytes per read (replies split anywhere).
type pipeConn struct {
	net.Conn
	data  []byte
	chunk int
}

func (p *pipeConn) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(b), p.chunk, len(p.data))
	copy(b, p.data[:n])
	p.data = p.data[n:]
	return n, nil
}

func TestSkipReplyEveryTypeSplitAnywhere(t *testing.T) {
	wire := "+OK\r\n:42\r\n$5\r\nhello\r\n$-1\r\n*2\r\n$1\r\na\r\n*1\r\n:1\r\n-MOVED 3999 127.0.0.1:6381\r\n$0\r\n\r\n*-1\r\n"
	want := []string{"", "", "", "", "", "MOVED 3999 127.0.0.1:6381", "", ""}
	for _, chunk := range []int{1, 2, 3, 7, 64} {
		rd := newReplyReader(&pipeConn{data: []byte(wire), chunk: chunk})
		for i, w := range want {
			got, err := rd.skipReply()
			if err != nil || got != w {
				t.Fatalf("chunk %d, reply %d: got %q, %v; want %q", chunk, i, got, err, w)
			}
		}
		if _, err := rd.skipReply(); err != io.EOF {
			t.Fatalf("chunk %d: after the last reply, want EOF, got %v", chunk, err)
		}
	}
}

func TestSkipReplyRefusesWhatIsNotRESP(t *testing.T) {
	for _, wire := range []string{"HTTP/1.1 400\r\n", "$abc\r\n", "\r\n"} {
		rd := newReplyReader(&pipeConn{data: []byte(wire), chunk: 64})
		if _, err := rd.skipReply(); err == nil || !strings.Contains(err.Error(), "protocol error") {
			t.Errorf("%q: want a protocol error, got %v", wire, err)
		}
	}
}

func TestAppendCommand(t *testing.T) {
	got := string(appendCommand(nil, []byte("SET"), []byte("key:000000000001"), []byte("xy")))
	if want := "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000000001\r\n$2\r\nxy\r\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestCRC16IsTheClusterHash(t *testing.T) {
	// The cluster specification's check value, and hash tags (only the part in {} counts).
	cases := map[string]uint16{"123456789": 0x31C3, "foo": 12182 % 16384, "{user1000}.following": crc16([]byte("user1000"))}
	for key, want := range cases {
		if got := crc16([]byte(key)) & 16383; got != want&16383 {
			t.Errorf("slot(%q) = %d, want %d", key, got, want&16383)
		}
	}
	if crc16([]byte("a{}b")) != crc16([]byte("a{}b")) || crc16([]byte("a{}b")) == crc16([]byte("")) {
		t.Error("an empty {} is no hash tag: the whole key hashes")
	}
}

func TestParseSlotsAndClusterKeys(t *testing.T) {
	node := func(host string, port int64) value {
		return value{array: []value{{str: host}, {num: port}, {str: "id"}}}
	}
	v := value{array: []value{
		{array: []value{{num: 10923}, {num: 16383}, node("10.0.0.3", 6379)}},
		{array: []value{{num: 0}, {num: 5460}, node("", 6379), node("10.0.0.4", 6379)}},
		{array: []value{{num: 5461}, {num: 10922}, node("?", 6380)}},
	}}
	m, err := parseSlots(v, "10.0.0.9")
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{m.shards[0].primary, m.shards[1].primary, m.shards[2].primary}; strings.Join(got, ",") != "10.0.0.9:6379,10.0.0.9:6380,10.0.0.3:6379" {
		t.Fatalf("shards by lowest slot, unknown hosts as the asked one: got %v", got)
	}
	if m.shards[0].replicas[0] != "10.0.0.4:6379" || m.owner[0] != 0 || m.owner[5461] != 1 || m.owner[16383] != 2 {
		t.Fatalf("owner/replicas wrong: %+v", m.shards)
	}
	// Every key a lane draws is its shard's: lists and rejection alike.
	for _, keyspace := range []int{1000, maxListedKeyspace + 1} {
		k := newKeys(4, keyspace, 8, 1)
		k.bind(m, 1)
		for i := 0; i < 2000; i++ {
			if s := m.owner[crc16(k.slotKey(pKey))&16383]; s != 1 {
				t.Fatalf("keyspace %d: key %q is shard %d's", keyspace, k.key, s)
			}
		}
		if m.owner[crc16(k.tagged(pList))&16383] != 1 {
			t.Fatalf("the tag %q is not shard 1's", k.tag)
		}
	}
	// keyShape tagged: every key of the lane is in its tag's slot (valkey-benchmark's shape).
	k := newKeys(4, 1000, 8, 1)
	k.sameSlot = true
	k.bind(m, 2)
	if key := string(k.slotKey(pKey)); !strings.HasPrefix(key, "key:"+string(k.tag)+":") || m.owner[crc16([]byte(key))&16383] != 2 {
		t.Fatalf("tagged key %q is not in shard 2's tag slot", key)
	}
	if _, err := parseSlots(value{array: []value{{array: []value{{num: 0}, {num: 16384}, node("h", 1)}}}}, "h"); err == nil {
		t.Error("a range past 16383 must be refused")
	}
}

func TestParseRedirect(t *testing.T) {
	for text, want := range map[string]string{"MOVED 1 10.0.0.1:6379": "moved 10.0.0.1:6379", "ASK 9 h:1": "ask h:1", "ERR wrong": "", "MOVED 1": ""} {
		ask, addr, ok := parseRedirect(text)
		got := ""
		if ok {
			got = map[bool]string{true: "ask ", false: "moved "}[ask] + addr
		}
		if got != want {
			t.Errorf("%q: got %q, want %q", text, got, want)
		}
	}
}

func TestSeriesBucket(t *testing.T) {
	for d, want := range map[float64]time.Duration{5: time.Second, 600: time.Second, 601: 2 * time.Second, 10800: 18 * time.Second} {
		if got := time.Duration(seriesBucketNs(d)); got != want {
			t.Errorf("%v s: bucket %v, want %v", d, got, want)
		}
	}
}

func TestSpecRefusesNamingTheField(t *testing.T) {
	base := `"mode":"standalone","target":"h:1","connections":1,"pipeline":1,"schedule":["get"],"keyspace":1,"dataSize":1,"durationSeconds":1`
	cases := map[string]string{
		`{` + base + `,"rate":10,"pace":10}`:                                       "exclude each other",
		`{` + strings.Replace(base, `"get"`, `"gte"`, 1) + `}`:                     `unknown test "gte"`,
		`{` + strings.Replace(base, `"h:1"`, `"h"`, 1) + `}`:                       "target must be host:port",
		`{` + base + `,"readsFromReplicas":true}`:                                  "readsFromReplicas is for cluster mode",
		`{` + base + `,"extra":1}`:                                                 "unknown field",
		`{` + strings.Replace(base, `"connections":1`, `"connections":0`, 1) + `}`: "connections must be >= 1",
	}
	for in, want := range cases {
		if _, err := readSpec(bytes.NewBufferString(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want an error containing %q, got %v", in, want, err)
		}
	}
}
