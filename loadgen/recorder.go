package main

import (
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies in whole microseconds with 3 significant digits (a recorded value is known within
// 0.1 %), as the Node side's histograms (latency-histogram.ts): up to one hour; a longer wait is
// recorded as one hour and counted in `clamped`.
const (
	lowestUs  = 1
	highestUs = 3_600_000_000
	sigDigits = 3
	// The open loop's latency-over-time series: 2 significant digits are enough for a chart.
	seriesHighestUs = 60_000_000
	seriesDigits    = 2
)

func newHist() *hdr.Histogram { return hdr.New(lowestUs, highestUs, sigDigits) }

// recorder holds every reply's latency, sharded so that lanes rarely wait for each other: lane i
// records into shard i % n under that shard's lock, once per batch.
type recorder struct {
	tests  []string
	shards []*recShard
	// seriesBucketNs > 0: the open loop's per-interval series by intended send time.
	seriesBucketNs int64
	// windows: a soak cuts windows (cutWindow); otherwise none is kept.
	windows bool
}

type recShard struct {
	mu       sync.Mutex
	hist     []*hdr.Histogram // per test
	errors   []int64
	firstErr []string
	window   *hdr.Histogram // the soak's current window
	winErrs  int64
	series   map[int64]*seriesBucket
	clamped  int64
}

type seriesBucket struct {
	h   *hdr.Histogram
	max int64
}

func newRecorder(tests []string, shards int, seriesBucketNs int64, windows bool) *recorder {
	r := &recorder{tests: tests, seriesBucketNs: seriesBucketNs, windows: windows}
	for i := 0; i < shards; i++ {
		s := &recShard{errors: make([]int64, len(tests)), firstErr: make([]string, len(tests)), window: newHist(), series: map[int64]*seriesBucket{}}
		for range tests {
			s.hist = append(s.hist, newHist())
		}
		r.shards = append(r.shards, s)
	}
	return r
}

func (r *recorder) shard(lane int) *recShard { return r.shards[lane%len(r.shards)] }

// reply records one reply's latency (µs) of test t; atNs is its intended send time (series). The
// caller holds s.mu.
func (s *recShard) reply(r *recorder, t int, us int64, atNs int64) {
	if us < lowestUs {
		us = lowestUs
	}
	if us > highestUs {
		us = highestUs
		s.clamped++
	}
	_ = s.hist[t].RecordValue(us)
	if r.windows {
		_ = s.window.RecordValue(us)
	}
	if r.seriesBucketNs > 0 {
		k := atNs / r.seriesBucketNs
		b := s.series[k]
		if b == nil {
			b = &seriesBucket{h: hdr.New(lowestUs, seriesHighestUs, seriesDigits)}
			s.series[k] = b
		}
		b.max = max(b.max, us)
		_ = b.h.RecordValue(min(us, seriesHighestUs))
	}
}

// fail records an error reply (or a request that got none) of test t. The caller holds s.mu.
func (s *recShard) fail(t int, msg string) {
	s.errors[t]++
	s.winErrs++
	if s.firstErr[t] == "" {
		s.firstErr[t] = msg
	}
}

// cutWindow takes every shard's window so far (fresh ones replace them).
func (r *recorder) cutWindow() (*hdr.Histogram, int64) {
	out, errs := newHist(), int64(0)
	for _, s := range r.shards {
		s.mu.Lock()
		w, e := s.window, s.winErrs
		s.window, s.winErrs = newHist(), 0
		s.mu.Unlock()
		out.Merge(w)
		errs += e
	}
	return out, errs
}

type testTotals struct {
	hist     *hdr.Histogram
	errors   int64
	firstErr string
}

// totals merges the shards per test.
func (r *recorder) totals() ([]testTotals, int64) {
	out := make([]testTotals, len(r.tests))
	clamped := int64(0)
	for i := range out {
		out[i].hist = newHist()
	}
	for _, s := range r.shards {
		s.mu.Lock()
		for i := range r.tests {
			out[i].hist.Merge(s.hist[i])
			out[i].errors += s.errors[i]
			if out[i].firstErr == "" {
				out[i].firstErr = s.firstErr[i]
			}
		}
		clamped += s.clamped
		s.mu.Unlock()
	}
	return out, clamped
}

// seriesPoint is one interval of intended send time: requests, p50, p99 and max in µs.
type seriesPoint struct {
	Index    int64 `json:"index"`
	Requests int64 `json:"requests"`
	P50Us    int64 `json:"p50Us"`
	P99Us    int64 `json:"p99Us"`
	MaxUs    int64 `json:"maxUs"`
}

// series merges the shards' buckets, one point per interval from 0 to `intervals` - 1.
func (r *recorder) series(intervals int64) []seriesPoint {
	merged := map[int64]*seriesBucket{}
	for _, s := range r.shards {
		s.mu.Lock()
		for k, b := range s.series {
			m := merged[k]
			if m == nil {
				m = &seriesBucket{h: hdr.New(lowestUs, seriesHighestUs, seriesDigits)}
				merged[k] = m
			}
			m.h.Merge(b.h)
			m.max = max(m.max, b.max)
		}
		s.mu.Unlock()
	}
	out := make([]seriesPoint, 0, intervals)
	for k := int64(0); k < intervals; k++ {
		p := seriesPoint{Index: k}
		if b := merged[k]; b != nil {
			p.Requests, p.P50Us, p.P99Us, p.MaxUs = b.h.TotalCount(), b.h.ValueAtQuantile(50), b.h.ValueAtQuantile(99), b.max
		}
		out = append(out, p)
	}
	return out
}
