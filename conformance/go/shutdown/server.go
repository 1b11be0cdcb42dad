package main

// Seed 004's ingest server, as its Go code is written (docs/graceful-shutdown.md): the HTTP
// ingress puts events on EventCh, CollectLoop batches them onto UploadCh, UploadLoop puts each
// batch to S3, and on SIGTERM Manager.Shutdown() runs in one of the three orders. The same
// pipeline as scenarios/behaviours/ingest.cpp, on real goroutines and real channels; S3 is a
// sleep drawn from the same distribution. Everything a trial needs to count where each event
// ended is in ledger.go; this file is only the server.

import (
	"context"
	"sync"
	"time"
)

type Order int

const (
	correct          Order = iota // close(EventCh); wait; cancel() (seed §3)
	cancelFirst                   // cancel(); close(EventCh); close(UploadCh); wait (seed §4.1)
	closeUploadFirst              // close(UploadCh); close(EventCh); wait; cancel() (seed §4.2)
	// net/http's ingress (a handler goroutine a request; handlersConfig), the correct order:
	handlersNoWait // the HTTP server does not wait for its handlers in flight before Shutdown()
	handlersWait   // it does, as http.Server.Shutdown does
)

var orderNames = []string{"correct", "cancel_first", "close_upload_first", "handlers_no_wait", "handlers_wait"}

// Event: an accepted request's event. Sent is when its sender began the send (the wake
// latency's measure: how long until CollectLoop, woken by it, took it).
type Event struct {
	ID   int
	Sent time.Time
}

type Batch struct{ ID, First, Last, Events int }

// Manager is the server's state: the channels, the context, the wait group.
type Manager struct {
	cfg      *Config
	order    Order
	EventCh  chan Event
	UploadCh chan Batch
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	inFlight sync.WaitGroup // net/http's handlers in flight (the handlers orders)
	received int            // CollectLoop's count of events taken: a handler's event's id
	stop     chan struct{}  // closed by main: the HTTP server stops accepting
	stopped  chan struct{}  // closed by the ingress once it has stopped
	ledger   *Ledger        // where each event is (ledger.go); not part of the server
	arrivals *Rand          // the ingress's request times
	s3       *Rand          // S3's latencies (UploadLoop's goroutine only)
	start    time.Time
}

func newManager(cfg *Config, order Order, seed int64) *Manager {
	m := &Manager{
		cfg:      cfg,
		order:    order,
		EventCh:  make(chan Event, cfg.EventCh),
		UploadCh: make(chan Batch, cfg.UploadCh),
		stop:     make(chan struct{}),
		stopped:  make(chan struct{}),
		ledger:   newLedger(cfg),
		arrivals: newRand(2 * seed),
		s3:       newRand(2*seed + 1),
	}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	return m
}

// ---- HTTP ingress -----------------------------------------------------------------------------

// ingress: requests arrive at the file's rate (Poisson, with bursts), on a schedule in absolute
// time so that a late wake-up does not slow the rate down. Each event waits at most IngressWait
// for room in EventCh, then gets 503. The server notices its stop when the next request comes
// (the request in hand is the last, as http.Server.Shutdown lets it finish): the simulator's
// ingress does the same.
func (m *Manager) ingress() {
	if m.order == handlersNoWait || m.order == handlersWait {
		m.httpServer()
		return
	}
	next := m.start
	accepted := 0
	for {
		next = next.Add(m.cfg.real(m.arrivals.gap(m.cfg, m.cfg.simSince(m.start, next))))
		time.Sleep(time.Until(next))
		select {
		case <-m.stop:
			close(m.stopped)
			return
		default:
		}
		wait := time.NewTimer(m.cfg.real(m.cfg.IngressWait))
		select {
		case m.EventCh <- Event{ID: accepted + 1, Sent: time.Now()}:
			accepted++
			m.ledger.accepted(accepted)
		case <-wait.C: // 503 busy: refused, not lost
		}
		wait.Stop()
	}
}

// httpServer: net/http's accept loop, a handler goroutine a request at the same arrival times.
// On its stop it accepts no more and, in handlersWait, waits for the handlers in flight (as
// http.Server.Shutdown does) before main goes on to Shutdown(), which closes EventCh.
func (m *Manager) httpServer() {
	next := m.start
	for {
		next = next.Add(m.cfg.real(m.arrivals.gap(m.cfg, m.cfg.simSince(m.start, next))))
		time.Sleep(time.Until(next))
		select {
		case <-m.stop:
			if m.order == handlersWait {
				m.inFlight.Wait()
			}
			close(m.stopped)
			return
		default:
		}
		m.inFlight.Add(1)
		go m.handler()
	}
}

// handler: one request. Its event waits at most IngressWait for room in EventCh, then 503. A
// send on EventCh closed meanwhile panics; net/http recovers it (the ledger counts it), and
// nothing else goes down. The event's id is its place on EventCh, which CollectLoop numbers.
func (m *Manager) handler() {
	defer m.inFlight.Done()
	defer func() {
		if r := recover(); r != nil {
			m.ledger.handlerPanicked(r)
		}
	}()
	wait := time.NewTimer(m.cfg.real(m.cfg.IngressWait))
	defer wait.Stop()
	select {
	case m.EventCh <- Event{Sent: time.Now()}:
		m.ledger.acceptedNext()
	case <-wait.C: // 503 busy
	}
}

// ---- CollectLoop ------------------------------------------------------------------------------

func (m *Manager) CollectLoop() {
	every := m.cfg.real(m.cfg.BatchEvery)
	timer := time.NewTimer(every)
	due := time.Now().Add(every) // when the timer should fire: its lateness is a wake latency too
	defer timer.Stop()
	var open []int
	batches := 0
	// flush sends the open batch on UploadCh (waiting while it is full, unless cancelled);
	// false when the loop must end.
	flush := func() bool {
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(every)
		due = time.Now().Add(every)
		if len(open) == 0 {
			return true
		}
		batches++
		b := Batch{ID: batches, First: open[0], Last: open[len(open)-1], Events: len(open)}
		open = nil
		select {
		case m.UploadCh <- b: // panics when UploadCh is closed: "send on closed channel"
			m.ledger.move(b.First, b.Last, inUploadCh)
			return true
		case <-m.ctx.Done():
			m.ledger.drop(b.First, b.Last, "open batch")
			return false
		}
	}
	for {
		// Nothing buffered: the select below parks CollectLoop until a send or its timer, and what
		// it then waits before it runs is a wake latency. Events that queued in EventCh while it
		// was busy (a flush waiting on UploadCh) are not wakes, and are not counted.
		parked := len(m.EventCh) == 0
		select {
		case <-m.ctx.Done(): // cancelled: the open batch goes with it
			if len(open) > 0 {
				m.ledger.drop(open[0], open[len(open)-1], "open batch")
			}
			return
		case e, ok := <-m.EventCh:
			if !ok { // EventCh closed: the final batch, then UploadCh is closed (seed §3)
				if flush() {
					close(m.UploadCh) // panics when main closed it: "close of closed channel"
				}
				return
			}
			if parked {
				m.ledger.woke(m.cfg.simSince(e.Sent, time.Now()))
			}
			m.received++
			if e.ID == 0 { // a handler's: its place on EventCh
				e.ID = m.received
			}
			open = append(open, e.ID)
			m.ledger.move(e.ID, e.ID, inOpenBatch)
			if len(open) < m.cfg.BatchSize {
				continue
			}
		case <-timer.C:
			if parked {
				m.ledger.timerLate(m.cfg.simSince(due, time.Now()))
			}
		}
		if !flush() {
			return
		}
	}
}

// ---- UploadLoop -------------------------------------------------------------------------------

// put: S3's PutObject in a goroutine of its own, so that the loop can wait for it or for
// ctx.Done(); false when the context was cancelled first. No put fails in the three files (S3's
// error ratio is 0 and the 10 s upload timeout is never reached), so the DLQ path is left out.
func (m *Manager) put(b Batch) bool {
	d := m.cfg.real(m.s3.putTime(m.cfg, b.Events))
	result := make(chan error, 1)
	began := time.Now()
	go func() {
		time.Sleep(d)
		result <- nil
	}()
	select {
	case <-result:
		m.ledger.putTook(m.cfg.simSince(began, time.Now()))
		return true
	case <-m.ctx.Done():
		return false
	}
}

func (m *Manager) UploadLoop() {
	for {
		select {
		case <-m.ctx.Done(): // cancelled (§4.1)
			return
		case b, ok := <-m.UploadCh:
			if !ok { // closed and drained
				return
			}
			m.ledger.move(b.First, b.Last, inFlight)
			if !m.put(b) {
				m.ledger.drop(b.First, b.Last, "in flight to S3")
				return
			}
			m.ledger.move(b.First, b.Last, uploaded)
		}
	}
}

// ---- main -------------------------------------------------------------------------------------

// wait is wg.Wait(); a trial also stops waiting when a goroutine panicked (the program is gone).
func (m *Manager) wait() {
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-m.ledger.crashed:
	}
}

// Shutdown is Manager.Shutdown() in the order chosen, after the HTTP server stopped accepting.
func (m *Manager) Shutdown() {
	switch m.order {
	case correct, handlersNoWait, handlersWait:
		close(m.EventCh)
		m.wait()
		m.cancel()
	case cancelFirst:
		m.cancel()
		close(m.EventCh)
		close(m.UploadCh)
		m.wait()
	case closeUploadFirst:
		close(m.UploadCh)
		close(m.EventCh)
		m.wait()
		m.cancel()
	}
}

// main of one trial: start the goroutines, wait for SIGTERM (a timer here), stop the HTTP
// server, run Shutdown(), return. Each goroutine's panic is recovered by go() and recorded with
// the goroutine's name; the first one ends the trial as it would end the program.
func (m *Manager) main() {
	m.start = time.Now()
	m.go_("ingress", nil, m.ingress)
	m.go_("CollectLoop", &m.wg, m.CollectLoop)
	m.go_("UploadLoop", &m.wg, m.UploadLoop)
	sigterm := time.NewTimer(time.Until(m.start.Add(m.cfg.real(m.cfg.Sigterm))))
	<-sigterm.C
	m.ledger.sigterm()
	func() {
		defer m.recover_("main")
		close(m.stop) // http.Server.Shutdown
		<-m.stopped
		m.Shutdown()
	}()
	m.ledger.exit()
	m.cancel() // the process is gone: release whatever still runs in this trial
}

// go_ starts a goroutine as `go f()` would, with wg.Add(1) / wg.Done() around it when wg is
// given. A panic is recorded (with the goroutine's name) before wg.Done(), so that a wait that
// returns because of it already sees the crash.
func (m *Manager) go_(name string, wg *sync.WaitGroup, f func()) {
	if wg != nil {
		wg.Add(1)
	}
	go func() {
		if wg != nil {
			defer wg.Done()
		}
		defer m.recover_(name)
		f()
	}()
}

func (m *Manager) recover_(name string) {
	if r := recover(); r != nil {
		m.ledger.panicked(name, r)
	}
}
