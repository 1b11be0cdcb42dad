// Records the Go runtime's answers to the channel rules that letitcrash's simulated channel
// claims (sim/channel.hpp). One line per case, "case: result", normalised so that the
// simulator can print the very same line (docs/conformance-go.md). Run: go run . (in this
// folder); conformance/go/go-live.sh compares the output with channels.expected.
//
// Go chooses among ready select cases at random, so that case prints a property of 1000 rounds,
// not a sequence. Cases that need goroutines to be blocked in a known order let them block one
// at a time (a short sleep between them): Go has no way to ask whether a goroutine is blocked.
package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"
)

// settle lets goroutines started just before reach the point where they block. A sleep alone
// is not enough on a loaded machine (a go-live run once saw a goroutine not yet blocked after
// 20 ms), so it then waits, up to half a second more, until no other goroutine is running or
// runnable: runtime.Stack names each one's state.
func settle() {
	time.Sleep(20 * time.Millisecond)
	for i := 0; i < 500 && !othersWaiting(); i++ {
		time.Sleep(time.Millisecond)
	}
}

// othersWaiting is true when every goroutine but the caller is waiting (on a channel, a
// select, a semaphore or a sleep). runtime.Stack lists the caller first.
func othersWaiting() bool {
	buf := make([]byte, 1<<20)
	n := runtime.Stack(buf, true)
	first := true
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		if !strings.HasPrefix(line, "goroutine ") {
			continue
		}
		if first {
			first = false
			continue
		}
		if strings.Contains(line, "[running]") || strings.Contains(line, "[runnable]") {
			return false
		}
	}
	return true
}

// panicText runs f and returns `panic "text"` if it panics, or "no panic".
func panicText(f func()) (out string) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(runtime.Error); ok {
				out = fmt.Sprintf("panic %q", e.Error())
			} else {
				out = fmt.Sprintf("panic %q", fmt.Sprint(r))
			}
		}
	}()
	f()
	return "no panic"
}

func recvText(c chan int) string {
	v, ok := <-c
	return fmt.Sprintf("%d,%t", v, ok)
}

func trySend(c chan int, v int) bool {
	select {
	case c <- v:
		return true
	default:
		return false
	}
}

func unbufferedRendezvous() string {
	c := make(chan int)
	sent := make(chan struct{})
	go func() { c <- 7; close(sent) }()
	settle()
	before := "sender still waiting"
	select {
	case <-sent:
		before = "sender done"
	default:
	}
	v := <-c
	<-sent
	return fmt.Sprintf("%s with no receiver - receiver gets %d - then sender done", before, v)
}

func bufferedCapacity() string {
	c := make(chan int, 2)
	n := 0
	for i := 1; i <= 3; i++ {
		if !trySend(c, i) {
			break
		}
		n++
	}
	return fmt.Sprintf("%d sends complete with no receiver - send %d would wait - len=%d cap=%d", n, n+1, len(c), cap(c))
}

func recvAfterCloseDrains() string {
	c := make(chan int, 3)
	c <- 1
	c <- 2
	close(c)
	l := len(c)
	var got []string
	for i := 0; i < 4; i++ {
		got = append(got, recvText(c))
	}
	return fmt.Sprintf("len=%d after close - %s", l, strings.Join(got, " "))
}

func sendOnClosed() string {
	c := make(chan int, 1)
	close(c)
	return panicText(func() { c <- 1 })
}

func closeOfClosed() string {
	c := make(chan int)
	close(c)
	return panicText(func() { close(c) })
}

func blockedSenderOnClose() string {
	c := make(chan int, 1)
	c <- 1
	res := make(chan string)
	go func() { res <- panicText(func() { c <- 2 }) }() // waits: the buffer is full
	settle()
	close(c)
	p := <-res
	return fmt.Sprintf("sender %s - buffer still drains %s then %s", p, recvText(c), recvText(c))
}

func blockedReceiversOnClose() string {
	c := make(chan int)
	res := make(chan string)
	for i := 0; i < 2; i++ {
		go func() { res <- recvText(c) }()
	}
	settle()
	close(c)
	return fmt.Sprintf("2 waiting receivers get %s and %s", <-res, <-res)
}

func blockedSendersFIFO() string {
	c := make(chan int)
	for i := 1; i <= 3; i++ {
		go func(v int) { c <- v }(i * 10)
		settle() // they start waiting in this order
	}
	return fmt.Sprintf("received %d %d %d", <-c, <-c, <-c)
}

func fullBufferSendersFIFO() string {
	c := make(chan int, 1)
	c <- 1
	for i := 2; i <= 3; i++ {
		go func(v int) { c <- v }(i)
		settle()
	}
	return fmt.Sprintf("received %d %d %d", <-c, <-c, <-c)
}

func blockedReceiversFIFO() string {
	c := make(chan int)
	res := make(chan string, 3)
	for i := 1; i <= 3; i++ {
		go func(who int) { v := <-c; res <- fmt.Sprintf("%d->r%d", v, who) }(i)
		settle()
	}
	var got []string
	for v := 10; v <= 30; v += 10 {
		c <- v
		got = append(got, <-res)
	}
	return strings.Join(got, " ")
}

func selectReadyCases() string {
	const rounds = 1000
	a, b := make(chan int, 1), make(chan int, 1)
	counts := [2]int{}
	for i := 0; i < rounds; i++ {
		a <- 1
		b <- 2
		select {
		case <-a:
			counts[0]++
			<-b
		case <-b:
			counts[1]++
			<-a
		}
	}
	return fmt.Sprintf("of 2 ready cases over %d rounds: %s", rounds, spread(counts[0], counts[1], rounds))
}

// spread states the property a uniform choice has (each case 40-60% of 1000 rounds is more
// than 6 standard deviations wide), not the counts, which differ from run to run.
func spread(x, y, rounds int) string {
	in := func(n int) bool { return n*10 >= rounds*4 && n*10 <= rounds*6 }
	if in(x) && in(y) {
		return "each chosen 40-60%"
	}
	return fmt.Sprintf("skewed %d/%d", x, y)
}

func selectDefault() string {
	c := make(chan int)
	select {
	case <-c:
		return "received"
	default:
		return "nothing ready - default taken"
	}
}

func selectWaitsForFirstReady() string {
	a, b := make(chan int), make(chan int)
	go func() { settle(); b <- 9 }()
	select {
	case v := <-a:
		return fmt.Sprintf("case a %d", v)
	case v := <-b:
		return fmt.Sprintf("waits - then case b gets %d", v)
	}
}

func contextCancelTwice() string {
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan string)
	go func() { _, ok := <-ctx.Done(); res <- fmt.Sprintf("%t", ok) }()
	settle()
	p := panicText(func() { cancel(); cancel() })
	return fmt.Sprintf("second cancel: %s - waiter on Done() gets ok=%s", p, <-res)
}

func errText(err error) string {
	if err == nil {
		return "nil"
	}
	return fmt.Sprintf("%q", err.Error())
}

func contextTimeoutErr() string {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	before := errText(ctx.Err())
	// Against the context's own deadline: a clock read taken after
	// WithTimeout returned starts late on a loaded machine, and the wait
	// then looks shorter than 50 ms though Done() closed on time.
	deadline, _ := ctx.Deadline()
	<-ctx.Done()
	waited := !time.Now().Before(deadline)
	after := errText(ctx.Err())
	cancel()
	return fmt.Sprintf("Err() %s before - Done() closed at the deadline: %t - Err() %s - after cancel() still %s",
		before, waited, after, errText(ctx.Err()))
}

func contextTimeoutCancelFirst() string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	cancel()
	_, ok := <-ctx.Done()
	return fmt.Sprintf("Done() ok=%t - Err() %s", ok, errText(ctx.Err()))
}

func contextTimeoutNotPositive() string {
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	select {
	case <-ctx.Done():
		return "Done() closed at once - Err() " + errText(ctx.Err())
	default:
		return "Done() open"
	}
}

func waitGroupWait() string {
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	wg.Add(3)
	for i := 0; i < 3; i++ {
		go func() {
			settle()
			mu.Lock()
			done++
			mu.Unlock()
			wg.Done()
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	return fmt.Sprintf("Wait() returned after %d of 3 Done()", done)
}

func waitGroupZero() string {
	var wg sync.WaitGroup
	wg.Wait()
	wg.Add(1)
	wg.Done()
	wg.Wait()
	return "Wait() at zero returns at once, also after Add(1) and Done()"
}

func waitGroupNegative() string {
	var wg sync.WaitGroup
	return panicText(func() { wg.Add(1); wg.Done(); wg.Done() })
}

func waitGroupManyWaiters() string {
	var wg sync.WaitGroup
	wg.Add(1)
	woke := make(chan int, 2)
	for i := 1; i <= 2; i++ {
		i := i
		go func() { wg.Wait(); woke <- i }()
	}
	settle()
	wg.Done()
	a, b := <-woke, <-woke
	return fmt.Sprintf("one Done() wakes both waiters: %d", a+b)
}

// deadlock runs this program again as a child that blocks every goroutine, and reports how
// the runtime stops it: its exit code and the first line of its standard error.
func deadlock() string {
	self, err := os.Executable()
	if err != nil {
		return "cannot find own executable: " + err.Error()
	}
	cmd := exec.Command(self, "deadlock-child")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		return "cannot run child: " + err.Error()
	}
	first := strings.SplitN(stderr.String(), "\n", 2)[0]
	return fmt.Sprintf("exit %d %q", code, first)
}

// A nil channel (the zero value of a channel variable): a send or receive on it waits for ever,
// close panics, and a select never chooses its case (Go code disables a case by setting its
// channel to nil).
func nilChannelBlocks() string {
	var c chan int
	sent := make(chan struct{})
	got := make(chan struct{})
	go func() { c <- 1; close(sent) }()
	go func() { <-c; close(got) }()
	settle()
	select {
	case <-sent:
		return "send on nil channel returned"
	case <-got:
		return "receive on nil channel returned"
	default:
		return "send and receive on a nil channel still waiting"
	}
}

func closeOfNil() string {
	var c chan int
	return panicText(func() { close(c) })
}

func nilCaseInSelect() string {
	var n chan int
	r := make(chan int, 1)
	chosenNil := 0
	for i := 0; i < 1000; i++ {
		r <- i
		select {
		case <-n:
			chosenNil++
		case n <- 1:
			chosenNil++
		case <-r:
		}
	}
	onlyNil := "blocked"
	select {
	case <-n:
		onlyNil = "received"
	default:
		onlyNil = "default taken"
	}
	return fmt.Sprintf("nil cases chosen %d times in 1000 rounds - only nil cases with default: %s", chosenNil, onlyNil)
}

func lenCapNil() string {
	var n chan int
	return fmt.Sprintf("nil channel len=%d cap=%d", len(n), cap(n))
}

func deadlockChild() {
	c := make(chan int)
	go func() { c <- 1; c <- 2 }() // one value is taken; the second send waits forever
	<-c
	<-make(chan int) // main waits on a channel nobody has
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "deadlock-child" {
		deadlockChild()
		return
	}
	cases := []struct {
		name string
		run  func() string
	}{
		{"unbuffered_rendezvous", unbufferedRendezvous},
		{"buffered_capacity", bufferedCapacity},
		{"recv_after_close_drains", recvAfterCloseDrains},
		{"send_on_closed_channel", sendOnClosed},
		{"close_of_closed_channel", closeOfClosed},
		{"blocked_sender_on_close", blockedSenderOnClose},
		{"blocked_receivers_on_close", blockedReceiversOnClose},
		{"blocked_senders_fifo", blockedSendersFIFO},
		{"full_buffer_senders_fifo", fullBufferSendersFIFO},
		{"blocked_receivers_fifo", blockedReceiversFIFO},
		{"select_ready_cases", selectReadyCases},
		{"select_default", selectDefault},
		{"select_waits_for_first_ready", selectWaitsForFirstReady},
		{"context_cancel_twice", contextCancelTwice},
		{"global_deadlock", deadlock},
		{"nil_channel_blocks", nilChannelBlocks},
		{"close_of_nil_channel", closeOfNil},
		{"nil_case_in_select", nilCaseInSelect},
		{"nil_channel_len_cap", lenCapNil},
		{"context_timeout_err", contextTimeoutErr},
		{"context_timeout_cancel_first", contextTimeoutCancelFirst},
		{"context_timeout_not_positive", contextTimeoutNotPositive},
		{"waitgroup_wait", waitGroupWait},
		{"waitgroup_zero", waitGroupZero},
		{"waitgroup_negative", waitGroupNegative},
		{"waitgroup_many_waiters", waitGroupManyWaiters},
	}
	for _, c := range cases {
		fmt.Printf("%s: %s\n", c.name, c.run())
	}
}
