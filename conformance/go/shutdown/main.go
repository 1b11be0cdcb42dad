// Seed 004's three shutdown orders on real goroutines (docs/conformance-go.md, "The shutdown
// orders"): the ingest server of server.go, with the arguments of the scenario files
// (scenarios/catalog/graceful_shutdown.yaml, scenarios/bugs/shutdown_cancel_first.yaml,
// scenarios/bugs/shutdown_close_upload_first.yaml), and net/http's handler goroutines not
// waited for and waited for (scenarios/bugs/shutdown_handlers_not_drained.yaml and its fix:
// handlersConfig), runs many trials of each order with time scaled down, and prints per order how many trials lost events and how many panicked, in which
// goroutine and with which text. Run: go run . [-trials N] (in this folder);
// conformance/go/go-live.sh runs it and checks the outcomes the recording shutdown.expected
// shows. The counts vary from run to run (the Go scheduler, the timers); what must hold is
// qualitative, and the comparison with the simulator says which bounds (docs/conformance-go.md).
//
// Output, one record a line (lines starting with # are notes: the settings and the measured
// times):
//
//	order ORDER trials N lost L panicked P
//	panic ORDER LOOP "TEXT" N        (trials whose first panic was in LOOP, with TEXT)
//	where ORDER "PLACE: WHY" N       (trials that lost events at PLACE, for WHY; a trial may lose at several)
//	wake N mean M p50 A p90 B p99 C over1ms F tail T
//	                                 (CollectLoop's wake latencies after an event's send, simulated ms: F the share later than 1 ms, T their mean)
//	timer N mean M ...               (how late its batch timer woke it, the same figures)
//
// With -loads 32,160,640 it runs every order at each number of trials at a time in turn, each
// record prefixed `load N`: the load the simulator's preemption is compared at
// (shutdown_loads.expected; docs/conformance-go.md, "Preemption").
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config: the scenario files' arguments, in simulated seconds, and the time scale.
type Config struct {
	Scale         time.Duration // the real duration of one simulated second
	Rate          float64       // events a second (rate: 20)
	BurstRate     float64       // during bursts (burst_rate: 80)
	BurstEvery    float64       // burst_every: 20s
	BurstFor      float64       // burst_for: 2s
	EventCh       int           // EventCh's capacity (event_ch: 1000, the default)
	UploadCh      int           // UploadCh's capacity (upload_ch: 10, the default)
	BatchSize     int           // batch_size: 50
	BatchEvery    float64       // batch_every: 1s (the default)
	IngressWait   float64       // ingress_wait: 100ms (the default)
	EventBytes    float64       // event_bytes: 200 (the default)
	LatencyMin    float64       // S3 latency_min: 20ms
	LatencyMean   float64       // S3 latency: 80ms (the mean, min plus an exponential)
	MBPerS        float64       // S3 mb_per_s: 100 (the default)
	NetworkOneWay float64       // network latency: 2ms, each way of a put
	Sigterm       float64       // stop_task at 30s
}

func fileConfig(scale time.Duration, sigterm float64) *Config {
	return &Config{
		Scale: scale, Rate: 20, BurstRate: 80, BurstEvery: 20, BurstFor: 2,
		EventCh: 1000, UploadCh: 10, BatchSize: 50, BatchEvery: 1, IngressWait: 0.1, EventBytes: 200,
		LatencyMin: 0.020, LatencyMean: 0.080, MBPerS: 100, NetworkOneWay: 0.002, Sigterm: sigterm,
	}
}

// handlersConfig: scenarios/bugs/shutdown_handlers_not_drained.yaml's arguments (net/http's
// handlers under backpressure: a small EventCh, one slot in UploadCh, a slow S3, SIGTERM at 21 s
// inside a burst, each request waiting up to 10 s).
func handlersConfig(scale time.Duration) *Config {
	return &Config{
		Scale: scale, Rate: 20, BurstRate: 80, BurstEvery: 20, BurstFor: 2,
		EventCh: 20, UploadCh: 1, BatchSize: 50, BatchEvery: 1, IngressWait: 10, EventBytes: 200,
		LatencyMin: 0.5, LatencyMean: 1.0, MBPerS: 100, NetworkOneWay: 0.002, Sigterm: 21,
	}
}

func (c *Config) real(simSeconds float64) time.Duration {
	return time.Duration(simSeconds * float64(c.Scale))
}

func (c *Config) simSince(from, to time.Time) float64 {
	return float64(to.Sub(from)) / float64(c.Scale)
}

// Rand: a trial's own stream for one goroutine (math/rand's Rand is not safe to share).
type Rand struct{ r *rand.Rand }

func newRand(seed int64) *Rand { return &Rand{rand.New(rand.NewSource(seed))} }

// gap: the time to the next request at simulated time `at`, exponential at the rate in force.
func (r *Rand) gap(c *Config, at float64) float64 {
	rate := c.Rate
	if c.BurstRate > 0 && math.Mod(at, c.BurstEvery) < c.BurstFor {
		rate = c.BurstRate
	}
	return r.r.ExpFloat64() / rate
}

// putTime: S3's latency (min plus an exponential), the transfer, and the network both ways.
func (r *Rand) putTime(c *Config, events int) float64 {
	transfer := float64(events) * c.EventBytes / (c.MBPerS * 1024 * 1024)
	return c.LatencyMin + r.r.ExpFloat64()*(c.LatencyMean-c.LatencyMin) + transfer + 2*c.NetworkOneWay
}

// tally: the outcomes of one order's trials.
type tally struct {
	trials, lost, panicked int
	panics                 map[string]int // `LOOP "TEXT"`
	where                  map[string]int // "PLACE: WHY"
	drains                 []float64
	putSum                 float64
	puts                   int
	accepted               int
	wakes                  []float64
	timerLate              []float64
}

func (t *tally) add(o Outcome) {
	t.trials++
	t.accepted += o.Accepted
	if o.Lost > 0 {
		t.lost++
	}
	if o.PanicLoop != "" {
		t.panicked++
		t.panics[fmt.Sprintf("%s %q", o.PanicLoop, o.PanicText)]++
	} else if o.HandlerPanics > 0 { // recovered by net/http: the trial went on
		t.panicked++
		t.panics[fmt.Sprintf("handler %q", o.HandlerText)]++
	}
	for w := range o.LostAt {
		t.where[w]++
	}
	t.drains = append(t.drains, o.Drain)
	t.wakes = append(t.wakes, o.Wakes...)
	t.timerLate = append(t.timerLate, o.TimerLate...)
	t.putSum += o.PutSum
	t.puts += o.Puts
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || (m[keys[i]] == m[keys[j]] && keys[i] < keys[j]) })
	return keys
}

func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[int(math.Ceil(p*float64(len(s))))-1]
}

// run: every trial, the orders interleaved (trial i runs order i mod 3, with seed base+i) so
// that whatever else loads the machine falls on the three alike; `parallel` trials at a time.
func run(cfg, handlers *Config, trials, parallel int, base int64) []*tally {
	out := make([]*tally, len(orderNames))
	for i := range out {
		out[i] = &tally{panics: map[string]int{}, where: map[string]int{}}
	}
	jobs := make(chan int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				order := Order(i % len(orderNames))
				c := cfg
				if order == handlersNoWait || order == handlersWait {
					c = handlers
				}
				m := newManager(c, order, base+int64(i))
				m.main()
				o := m.ledger.outcome()
				mu.Lock()
				out[m.order].add(o)
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < trials*len(orderNames); i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return out
}

// report prints one run's records, each after `prefix` ("" or "load N ").
func report(cfg *Config, out []*tally, trials, parallel int, prefix string) {
	fmt.Printf("# seed 004's shutdown orders on real goroutines (conformance/go/shutdown, docs/conformance-go.md)\n")
	fmt.Printf("# %s %s/%s, GOMAXPROCS %d: %d trials per order, 1 simulated s = %v, SIGTERM at %g s, %d trials at a time\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), trials, cfg.Scale, cfg.Sigterm, parallel)
	fmt.Printf("# handlers_*: net/http's handlers with scenarios/bugs/shutdown_handlers_not_drained.yaml's arguments, SIGTERM at 21 s; panicked: trials in which a handler panicked (recovered)\n")
	for o, t := range out {
		fmt.Printf(prefix+"order %s trials %d lost %d panicked %d\n", orderNames[o], t.trials, t.lost, t.panicked)
	}
	for o, t := range out {
		for _, k := range sortedKeys(t.panics) {
			fmt.Printf(prefix+"panic %s %s %d\n", orderNames[o], k, t.panics[k])
		}
	}
	for o, t := range out {
		for _, k := range sortedKeys(t.where) {
			fmt.Printf(prefix+"where %s %q %d\n", orderNames[o], k, t.where[k])
		}
	}
	var putSum float64
	puts, accepted := 0, 0
	drains := []string{}
	for o, t := range out {
		drains = append(drains, fmt.Sprintf("%s %.3f / %.3f", orderNames[o], percentile(t.drains, 0.5), percentile(t.drains, 0.9)))
		if Order(o) >= handlersNoWait {
			continue // their own arguments (handlersConfig)
		}
		putSum += t.putSum
		puts += t.puts
		accepted += t.accepted
	}
	// CollectLoop's wake latency over the three orders of the files' arguments: how long it stayed
	// runnable but not running after an event was sent to it (the load; docs/conformance-go.md,
	// "Preemption"); and, apart, how late its batch timer woke it.
	var wakes, late []float64
	for o, t := range out {
		if Order(o) < handlersNoWait {
			wakes = append(wakes, t.wakes...)
			late = append(late, t.timerLate...)
		}
	}
	fmt.Printf("%s%s\n", prefix, wakeLine("wake", wakes))
	fmt.Printf("%s%s\n", prefix, wakeLine("timer", late))
	model := cfg.LatencyMean + 2*cfg.NetworkOneWay + float64(cfg.BatchSize)*cfg.EventBytes/(cfg.MBPerS*1024*1024)
	fmt.Printf("# measured: an S3 put took %.0f simulated ms on average (the model's mean: %.0f ms for a full batch); %.0f events accepted a trial\n",
		1000*putSum/math.Max(1, float64(puts)), 1000*model, float64(accepted)/float64(trials*int(handlersNoWait)))
	fmt.Printf("# drain (SIGTERM to the end, simulated s) p50 / p90: %s\n", strings.Join(drains, ", "))
}

// wakeLine: `WHAT N mean M p50 A p90 B p99 C over1ms F tail T`, times in simulated ms: F is the
// share of wakes later than 1 ms, T their mean. The simulator's preemption takes its chance and
// its mean from the `wake` line's F and T (docs/conformance-go.md, "Preemption").
func wakeLine(what string, ws []float64) string {
	if len(ws) == 0 {
		return what + " 0"
	}
	sum, tail, over := 0.0, 0.0, 0
	for _, w := range ws {
		sum += w
		if w > 0.001 {
			over++
			tail += w
		}
	}
	return fmt.Sprintf("%s %d mean %.3f p50 %.3f p90 %.3f p99 %.3f over1ms %.4f tail %.3f", what, len(ws), 1000*sum/float64(len(ws)),
		1000*percentile(ws, 0.5), 1000*percentile(ws, 0.9), 1000*percentile(ws, 0.99), float64(over)/float64(len(ws)),
		1000*tail/math.Max(1, float64(over)))
}

func main() {
	trials := flag.Int("trials", 500, "trials per order")
	scale := flag.Duration("scale", 50*time.Millisecond, "the real duration of one simulated second")
	parallel := flag.Int("parallel", 160, "trials run at a time")
	sigterm := flag.Float64("sigterm", 30, "SIGTERM at this simulated second (the files: 30)")
	seed := flag.Int64("seed", 1, "the first trial's seed (arrival times and S3 latencies; the Go scheduler is not seeded)")
	loads := flag.String("loads", "", "comma-separated trials at a time (e.g. 8,160,640): run every order at each, each record prefixed `load N` (docs/conformance-go.md, \"Preemption\")")
	flag.Parse()
	if flag.NArg() != 0 || *trials < 1 || *parallel < 1 || *scale <= 0 || *sigterm <= 0 {
		fmt.Fprintln(os.Stderr, "shutdown: usage: go run . [-trials N>0] [-scale D>0] [-parallel N>0] [-sigterm S>0] [-seed N] [-loads N,N,...]")
		os.Exit(2)
	}
	cfg := fileConfig(*scale, *sigterm)
	if *loads == "" {
		report(cfg, run(cfg, handlersConfig(*scale), *trials, *parallel, *seed), *trials, *parallel, "")
	} else {
		for _, field := range strings.Split(*loads, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(field))
			if err != nil || n < 1 {
				fmt.Fprintf(os.Stderr, "shutdown: -loads: '%s' is not a number of trials above 0\n", field)
				os.Exit(2)
			}
			report(cfg, run(cfg, handlersConfig(*scale), *trials, n, *seed), *trials, n, fmt.Sprintf("load %d ", n))
		}
	}
	// Every trial's goroutines end with it (the puts left after a panic finish their sleep).
	time.Sleep(cfg.real(1))
	if n := runtime.NumGoroutine(); n > 1 {
		fmt.Fprintf(os.Stderr, "shutdown: %d goroutines still running after the trials (a leak in the harness)\n", n-1)
		os.Exit(1)
	}
}
