package main

// The trial's bookkeeping, not part of the server: where each accepted event is (EventCh, the
// open batch, UploadCh, in flight to S3, uploaded), which events a goroutine dropped and where,
// and how the program ended (main returned, or the first panic, with its goroutine's name). The
// places are those of the simulator's conservation check (properties/ingest_conservation.hpp).
//
// A place only moves forward (a batch CollectLoop marks as queued may already be in flight), and
// nothing changes once the program has ended: an upload that completes after a panic does not
// count, as the real process would be gone.

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

type place uint8

const (
	inEventCh place = iota + 1
	inOpenBatch
	inUploadCh
	inFlight
	uploaded
)

var placeNames = map[place]string{
	inEventCh:   "EventCh",
	inOpenBatch: "open batch",
	inUploadCh:  "UploadCh",
	inFlight:    "in flight to S3",
}

// Outcome is how one trial ended.
type Outcome struct {
	Accepted      int
	Lost          int
	LostAt        map[string]bool // "place why": where events were lost, and why (cancelled, panic, exited)
	PanicLoop     string          // the goroutine whose panic ended the program; "" when main returned
	PanicText     string
	HandlerPanics int     // handlers whose panic net/http recovered (the program went on)
	HandlerText   string  // the first one's text
	Drain         float64 // simulated seconds from SIGTERM to the end
	PutSum        float64 // simulated seconds over all completed puts
	Puts          int
	Wakes         []float64 // CollectLoop's wake latencies, simulated seconds: from the send of an event that woke it (it had parked: nothing buffered) until it ran
	TimerLate     []float64 // how late CollectLoop's batch timer woke it, simulated seconds (Go's timer granule and the CPU)
}

type Ledger struct {
	mu      sync.Mutex
	accepts int            // handlers' events accepted so far (acceptedNext)
	where   []place        // by event id (1, 2, ...)
	dropped map[int]string // event id -> the place it was dropped from (cancelled)
	dead    bool
	crashed chan struct{} // closed by the first panic
	sigAt   time.Time
	out     Outcome
	cfg     *Config
}

func newLedger(cfg *Config) *Ledger {
	return &Ledger{where: []place{0}, dropped: map[int]string{}, crashed: make(chan struct{}), cfg: cfg}
}

func (l *Ledger) accepted(id int) {
	l.move(id, id, inEventCh)
}

// acceptedNext: a handler's send went through. The k-th send on EventCh is the k-th event
// CollectLoop takes (a channel is FIFO), so the k-th call accepts id k, whichever handler makes
// it first; a place only moves forward, so coming after CollectLoop's own move changes nothing.
func (l *Ledger) acceptedNext() {
	l.mu.Lock()
	l.accepts++
	id := l.accepts
	l.mu.Unlock()
	l.accepted(id)
}

// handlerPanicked: a handler's panic, recovered by net/http: counted, and the program goes on.
func (l *Ledger) handlerPanicked(r interface{}) {
	text := panicText(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dead {
		return
	}
	if l.out.HandlerPanics == 0 {
		l.out.HandlerText = text
	}
	l.out.HandlerPanics++
}

// move puts events first..last at p, unless they are already further on.
func (l *Ledger) move(first, last int, p place) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dead {
		return
	}
	for len(l.where) <= last {
		l.where = append(l.where, 0)
	}
	for id := first; id <= last; id++ {
		if l.where[id] < p {
			l.where[id] = p
		}
	}
}

func (l *Ledger) drop(first, last int, from string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dead {
		return
	}
	for id := first; id <= last; id++ {
		l.dropped[id] = from
	}
}

func (l *Ledger) putTook(simSeconds float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.out.PutSum += simSeconds
	l.out.Puts++
}

// woke: CollectLoop ran `simSeconds` after the event that woke it was sent.
func (l *Ledger) woke(simSeconds float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.dead {
		l.out.Wakes = append(l.out.Wakes, simSeconds)
	}
}

// timerLate: CollectLoop's batch timer woke it `simSeconds` after it was due.
func (l *Ledger) timerLate(simSeconds float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.dead {
		l.out.TimerLate = append(l.out.TimerLate, simSeconds)
	}
}

func (l *Ledger) sigterm() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sigAt = time.Now()
}

// panicked records a goroutine's panic; the first one ends the program.
func (l *Ledger) panicked(name string, r interface{}) {
	text := panicText(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.dead {
		return
	}
	l.out.PanicLoop, l.out.PanicText = name, text
	l.end("panic")
	close(l.crashed)
}

// exit: main returned (when no panic ended the program first).
func (l *Ledger) exit() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.dead {
		l.end("exited")
	}
}

// end counts, for every accepted event, whether it was uploaded, and where the others were lost.
func (l *Ledger) end(why string) {
	l.dead = true
	l.out.Drain = l.cfg.simSince(l.sigAt, time.Now())
	l.out.LostAt = map[string]bool{}
	for id := 1; id < len(l.where); id++ {
		p := l.where[id]
		if p == 0 {
			continue // not accepted yet: cannot happen once the ingress has stopped
		}
		l.out.Accepted++
		if from, ok := l.dropped[id]; ok {
			l.out.Lost++
			l.out.LostAt[from+": cancelled"] = true
		} else if p != uploaded {
			l.out.Lost++
			l.out.LostAt[placeNames[p]+": "+why] = true
		}
	}
}

func (l *Ledger) outcome() Outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.out
}

// panicText: what recover() returned, as Go prints it ("send on closed channel").
func panicText(r interface{}) string {
	if e, ok := r.(runtime.Error); ok {
		return e.Error()
	}
	return fmt.Sprint(r)
}
