package main

// The wire protocol, RESP2, written and read by hand on the hot path: valkey-go, the official Go
// client, measured 0.52-0.74x redis-benchmark against a 3-primary cluster on this project's
// machines (docs/report-and-sweep.md, "The load generator"), below the 0.8 bar; the per-reply
// allocations of a general client are the difference. Requests are appended to one buffer per
// batch and written with one syscall; replies are scanned in place in a read buffer, keeping only
// what the generator needs: where each reply ends, whether it is an error, and its text if so.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// appendCommand appends one RESP2 array of bulk strings.
func appendCommand(b []byte, args ...[]byte) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	for _, a := range args {
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(a)), 10)
		b = append(b, '\r', '\n')
		b = append(b, a...)
		b = append(b, '\r', '\n')
	}
	return b
}

// errProtocol: the server sent something that is not RESP2.
var errProtocol = errors.New("protocol error")

// replyReader scans replies from one connection.
type replyReader struct {
	c    net.Conn
	buf  []byte
	r, w int
	// when the last read returned: the arrival time of every reply completed from it.
	arrived time.Time
	bytes   int64
}

func newReplyReader(c net.Conn) *replyReader {
	return &replyReader{c: c, buf: make([]byte, 64<<10)}
}

func (rd *replyReader) fill() error {
	if rd.r > 0 {
		copy(rd.buf, rd.buf[rd.r:rd.w])
		rd.w -= rd.r
		rd.r = 0
	}
	if rd.w == len(rd.buf) {
		nb := make([]byte, 2*len(rd.buf))
		copy(nb, rd.buf[:rd.w])
		rd.buf = nb
	}
	n, err := rd.c.Read(rd.buf[rd.w:])
	rd.w += n
	rd.bytes += int64(n)
	if n > 0 {
		rd.arrived = time.Now()
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// line returns the next line without its CRLF; valid until the next read.
func (rd *replyReader) line() ([]byte, error) {
	scanned := 0 // bytes after rd.r known to hold no complete CRLF
	for {
		if i := bytes.Index(rd.buf[rd.r+scanned:rd.w], crlf); i >= 0 {
			end := rd.r + scanned + i
			l := rd.buf[rd.r:end]
			rd.r = end + 2
			return l, nil
		}
		scanned = max(0, rd.w-rd.r-1)
		if err := rd.fill(); err != nil {
			return nil, err
		}
	}
}

var crlf = []byte("\r\n")

func (rd *replyReader) skip(n int) error {
	for rd.w-rd.r < n {
		if err := rd.fill(); err != nil {
			return err
		}
	}
	rd.r += n
	return nil
}

func parseLen(b []byte) (int, error) {
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return 0, fmt.Errorf("%w: length %q", errProtocol, b)
	}
	return n, nil
}

// skipReply reads one reply and returns its error text ("" when it is not an error reply).
func (rd *replyReader) skipReply() (string, error) {
	l, err := rd.line()
	if err != nil {
		return "", err
	}
	if len(l) == 0 {
		return "", fmt.Errorf("%w: empty line", errProtocol)
	}
	switch l[0] {
	case '+', ':':
		return "", nil
	case '-':
		return string(l[1:]), nil
	case '$':
		n, err := parseLen(l[1:])
		if err != nil || n < 0 {
			return "", err
		}
		return "", rd.skip(n + 2)
	case '*':
		n, err := parseLen(l[1:])
		if err != nil {
			return "", err
		}
		for i := 0; i < n; i++ {
			if _, err := rd.skipReply(); err != nil {
				return "", err
			}
		}
		return "", nil
	}
	return "", fmt.Errorf("%w: unexpected %q", errProtocol, l)
}

// value is a parsed reply, for the few control commands (AUTH, CLUSTER SLOTS): a string, an
// integer, an error, nil, or an array of values.
type value struct {
	str   string
	num   int64
	err   string
	isNil bool
	array []value
}

func (rd *replyReader) readValue() (value, error) {
	l, err := rd.line()
	if err != nil {
		return value{}, err
	}
	if len(l) == 0 {
		return value{}, fmt.Errorf("%w: empty line", errProtocol)
	}
	switch l[0] {
	case '+':
		return value{str: string(l[1:])}, nil
	case '-':
		return value{err: string(l[1:])}, nil
	case ':':
		n, err := strconv.ParseInt(string(l[1:]), 10, 64)
		return value{num: n}, err
	case '$':
		n, err := parseLen(l[1:])
		if err != nil || n < 0 {
			return value{isNil: n < 0}, err
		}
		for rd.w-rd.r < n+2 {
			if err := rd.fill(); err != nil {
				return value{}, err
			}
		}
		s := string(rd.buf[rd.r : rd.r+n])
		rd.r += n + 2
		return value{str: s}, nil
	case '*':
		n, err := parseLen(l[1:])
		if err != nil || n < 0 {
			return value{isNil: n < 0}, err
		}
		v := value{array: make([]value, n)}
		for i := range v.array {
			if v.array[i], err = rd.readValue(); err != nil {
				return value{}, err
			}
		}
		return v, nil
	}
	return value{}, fmt.Errorf("%w: unexpected %q", errProtocol, l)
}
