#pragma once
// Channels with Go's semantics (docs/kernel.md, "Channels"), for systems written the way Go code
// is: goroutines (free-form processes, or behaviour callbacks) sharing bounded queues on one node.
//
// - A channel has a capacity: 0 is a rendezvous (a send waits for a receiver), N a buffer.
// - A send waits while the buffer is full; a receive waits while it is empty and open.
// - close: receivers drain what is buffered, then get ok=false at once; a send on a closed
//   channel, and a second close, crash the process ("send on closed channel", "close of closed
//   channel", as Go panics).
// - Blocked senders and receivers are served first come, first served.
// - select: of the cases ready, one chosen uniformly from the process's own random stream (Go
//   picks at random too); none ready, it waits for the first to become ready, or its timeout
//   (zero: Go's `default`).
// - A nil channel (`Chan{}`, Go's zero value): a send or receive on it waits for ever (until the
//   process is killed), a select never chooses its case (Go code disables a case that way), close
//   crashes the process ("close of nil channel"), and its length and capacity are 0. Its wait is
//   traced as a chan_wait on a channel named `nil`.
// Every operation is a kernel event in the trace (chan_make, chan_send, chan_recv, chan_close,
// chan_wait, chan_wake) with the buffer's length after it.
// - Contexts (make_context, make_context_with_timeout, cancel, context_err) and WaitGroups
//   (make_waitgroup, wg_add, wg_done, wg_wait) are built on channels, with Go's texts: "context
//   canceled", "context deadline exceeded", and the panic "sync: negative WaitGroup counter". A channel belongs to the node of the
// process that made it; using it from another node is a bug of the system's code (it crashes).

#include <cstdint>

#include "sim/message.hpp"

namespace lic {

/// A channel's handle: copy it freely (to the goroutines that share the channel). The default
/// one is Go's nil channel.
struct Chan {
  std::uint32_t id = 0;
  explicit operator bool() const { return id != 0; }
  bool operator==(const Chan&) const = default;
};

/// What a receive got: a value with ok = true, or (closed and drained) none with ok = false.
struct ChanRecv {
  Payload value;
  bool ok = false;
};

/// One case of Context::select.
struct SelectCase {
  Chan chan;
  bool is_send = false;
  Payload value;     ///< a send's value (moved out when the send happens)
  ChanRecv received;  ///< a receive's result, when this case was chosen
  /// A send's place among every value ever sent on the channel (1, 2, ...), once it happened: the
  /// order receivers take them in (a channel is FIFO), whichever sender runs first afterwards.
  std::uint64_t seq = 0;

  static SelectCase send(Chan c, Payload v) {
    SelectCase s;
    s.chan = c;
    s.is_send = true;
    s.value = std::move(v);
    return s;
  }
  static SelectCase recv(Chan c) {
    SelectCase s;
    s.chan = c;
    return s;
  }
};

/// A Go-style context with cancel: `done` is a channel closed by cancel() (receiving from it
/// returns at once from then on), or at its deadline when made with a timeout
/// (context.WithTimeout). Cancelling twice is harmless, as in Go. Why it closed is the kernel's
/// (Context::context_err, Go's ctx.Err()), so every copy of the handle sees it.
struct CancelContext {
  Chan done;
};

/// Go's sync.WaitGroup: a counter that wg_add moves and wg_wait waits to see at zero. Copy the
/// handle freely; the default one is no group. A wait is a receive on a channel named after the
/// group, closed when the count comes to zero (chan_wait and chan_close in the trace).
struct WaitGroup {
  std::uint32_t id = 0;
  explicit operator bool() const { return id != 0; }
  bool operator==(const WaitGroup&) const = default;
};

}  // namespace lic
