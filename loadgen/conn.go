package main

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// conn is one connection to one server: requests go out through write, replies are scanned by rd.
type conn struct {
	addr    string
	c       net.Conn
	rd      *replyReader
	written int64
}

// authError: the server refused the password (exit code 3).
type authError struct{ msg string }

func (e authError) Error() string { return e.msg }

// connectError: a server could not be reached or set up (exit code 4).
type connectError struct{ msg string }

func (e connectError) Error() string { return e.msg }

// dial connects, authenticates with the password (when there is one) and sends READONLY when the
// connection is to read from a cluster replica.
func dial(addr, password string, readonly bool, timeout time.Duration) (*conn, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, connectError{fmt.Sprintf("cannot connect to %s: %v", addr, err)}
	}
	k := &conn{addr: addr, c: c, rd: newReplyReader(c)}
	if password != "" {
		if v, err := k.call(timeout, "AUTH", password); err != nil {
			k.close()
			return nil, err
		} else if v.err != "" {
			k.close()
			return nil, authError{fmt.Sprintf("%s refused the password: %s", addr, v.err)}
		}
	}
	if readonly {
		if v, err := k.call(timeout, "READONLY"); err != nil || v.err != "" {
			k.close()
			return nil, connectError{fmt.Sprintf("%s: READONLY failed: %v%s", addr, err, v.err)}
		}
	}
	return k, nil
}

// call sends one command and reads its whole reply (control commands only, not the load).
func (k *conn) call(timeout time.Duration, args ...string) (value, error) {
	b := make([][]byte, len(args))
	for i, a := range args {
		b[i] = []byte(a)
	}
	_ = k.c.SetDeadline(time.Now().Add(timeout))
	defer func() { _ = k.c.SetDeadline(time.Time{}) }()
	if err := k.write(appendCommand(nil, b...)); err != nil {
		return value{}, err
	}
	v, err := k.rd.readValue()
	if err != nil {
		return value{}, connectError{fmt.Sprintf("%s: %s: %v", k.addr, strings.ToUpper(args[0]), err)}
	}
	return v, nil
}

func (k *conn) write(b []byte) error {
	n, err := k.c.Write(b)
	k.written += int64(n)
	if err != nil {
		return fmt.Errorf("write to %s: %w", k.addr, err)
	}
	return nil
}

func (k *conn) close() { _ = k.c.Close() }
