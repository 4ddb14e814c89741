package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

type testResult struct {
	Test       string `json:"test"`
	Count      int64  `json:"count"`
	Errors     int64  `json:"errors"`
	FirstError string `json:"firstError,omitempty"`
	// The latencies (µs) as HdrHistogram's V2 compressed encoding, base64 (hdr-histogram-js
	// decodeFromCompressedBase64 reads it).
	Hist string `json:"hist"`
}

type openLoopResult struct {
	Rate      float64       `json:"rate"`
	Sent      int64         `json:"sent"`
	BucketS   float64       `json:"bucketS"`
	Series    []seriesPoint `json:"series"`
	LagMaxUs  float64       `json:"lagMaxUs"`
	LagMeanUs float64       `json:"lagMeanUs"`
}

type cpuUse struct {
	UserS float64 `json:"userS"`
	SysS  float64 `json:"sysS"`
	WallS float64 `json:"wallS"`
	// The CPUs the generator may use: GOMAXPROCS (which follows a cgroup CPU limit), or the
	// limit itself when it is lower and fractional.
	Cores float64 `json:"cores"`
}

type result struct {
	Type      string          `json:"type"`
	Version   string          `json:"version"`
	Tests     []testResult    `json:"tests"`
	WindowS   float64         `json:"windowS"`
	OpenLoop  *openLoopResult `json:"openLoop,omitempty"`
	Redirects struct {
		Moved int64 `json:"moved"`
		Ask   int64 `json:"ask"`
	} `json:"redirects"`
	Bytes struct {
		Written int64 `json:"written"`
		Read    int64 `json:"read"`
	} `json:"bytes"`
	CPU cpuUse `json:"cpu"`
	// Replies slower than an hour, recorded as one hour.
	Clamped int64 `json:"clamped"`
}

func encode(h *hdr.Histogram) (string, error) {
	b, err := h.Encode(hdr.V2CompressedEncodingCookieBase)
	return string(b), err
}

func rusage() (user, sys float64) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()).Seconds(), time.Duration(ru.Stime.Nano()).Seconds()
}

// cpuLimit: a cgroup's CPU quota in cores (v2 cpu.max, v1 cfs quota/period), 0 when none.
func cpuLimit() float64 {
	if b, err := os.ReadFile("/sys/fs/cgroup/cpu.max"); err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 && f[0] != "max" {
			q, e1 := strconv.ParseFloat(f[0], 64)
			p, e2 := strconv.ParseFloat(f[1], 64)
			if e1 == nil && e2 == nil && p > 0 {
				return q / p
			}
		}
		return 0
	}
	q, e1 := os.ReadFile("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")
	p, e2 := os.ReadFile("/sys/fs/cgroup/cpu/cpu.cfs_period_us")
	if e1 != nil || e2 != nil {
		return 0
	}
	qv, _ := strconv.ParseFloat(strings.TrimSpace(string(q)), 64)
	pv, _ := strconv.ParseFloat(strings.TrimSpace(string(p)), 64)
	if qv <= 0 || pv <= 0 {
		return 0
	}
	return qv / pv
}

func cores() float64 {
	c := float64(runtime.GOMAXPROCS(0))
	if l := cpuLimit(); l > 0 && l < c {
		return l
	}
	return c
}

// execute connects, runs the loop the spec asks for, and writes the ready, window and result lines.
func execute(s *Spec, out *lineWriter) error {
	g := newGen(s)
	if err := g.connect(); err != nil {
		return err
	}
	defer g.closeAll()
	u0, s0 := rusage()
	g.start = time.Now()
	if err := out.line(map[string]any{"type": "ready", "connections": len(g.lanes), "startUnixMs": g.start.UnixMilli(), "version": version}); err != nil {
		return err
	}
	stopWindows := g.startWindows(out)
	var window time.Duration
	var st *openStats
	if s.Rate > 0 {
		window, st = g.runOpen()
	} else {
		window = g.runClosed()
	}
	if err := stopWindows(); err != nil {
		return err
	}
	u1, s1 := rusage()
	r := result{Type: "result", Version: version, WindowS: window.Seconds()}
	r.CPU = cpuUse{UserS: u1 - u0, SysS: s1 - s0, WallS: time.Since(g.start).Seconds(), Cores: cores()}
	r.Redirects.Moved, r.Redirects.Ask = g.redirects.moved.Load(), g.redirects.ask.Load()
	for _, l := range g.lanes {
		w, rd := l.bytes()
		r.Bytes.Written += w
		r.Bytes.Read += rd
	}
	totals, clamped := g.rec.totals()
	r.Clamped = clamped
	for i, t := range totals {
		enc, err := encode(t.hist)
		if err != nil {
			return fmt.Errorf("encoding the %s histogram: %w", g.rec.tests[i], err)
		}
		r.Tests = append(r.Tests, testResult{Test: g.rec.tests[i], Count: t.hist.TotalCount(), Errors: t.errors, FirstError: t.firstErr, Hist: enc})
	}
	if st != nil {
		bucket := float64(g.rec.seriesBucketNs) / 1e9
		intervals := int64(s.DurationSeconds/bucket + 0.999999)
		r.OpenLoop = &openLoopResult{Rate: s.Rate, Sent: st.sent, BucketS: bucket, Series: g.rec.series(intervals), LagMaxUs: float64(st.lagMaxNs) / 1e3}
		if st.sent > 0 {
			r.OpenLoop.LagMeanUs = st.lagSumNs / float64(st.sent) / 1e3
		}
	}
	return out.line(r)
}

// startWindows cuts a soak's windows on schedule (start + k x WindowSeconds) and writes one line
// each; the returned stop cuts the last, partial one.
func (g *gen) startWindows(out *lineWriter) func() error {
	if g.spec.WindowSeconds <= 0 {
		return func() error { return nil }
	}
	every := time.Duration(g.spec.WindowSeconds * float64(time.Second))
	quit := make(chan struct{})
	done := make(chan error, 1)
	from := g.start
	k := 0
	cut := func(to time.Time) error {
		h, errs := g.rec.cutWindow()
		enc, err := encode(h)
		if err != nil {
			return err
		}
		line := map[string]any{"type": "window", "index": k, "fromMs": from.UnixMilli(), "toMs": to.UnixMilli(), "count": h.TotalCount(), "errors": errs, "hist": enc}
		k++
		from = to
		return out.line(line)
	}
	go func() {
		for {
			due := g.start.Add(time.Duration(k+1) * every)
			select {
			case <-quit:
				done <- cut(time.Now())
				return
			case <-time.After(time.Until(due)):
				if err := cut(due); err != nil {
					done <- err
					return
				}
			}
		}
	}()
	return func() error {
		close(quit)
		return <-done
	}
}
