#pragma once
// The execution mechanism, hidden behind a small symmetric-switch interface. Only fiber.cpp
// includes Boost; nothing else knows which backend runs. Both backends run every fiber on the
// calling OS thread, one at a time, and switch only where switch_to() is called: there is no
// scheduler decision and no timed wait anywhere (Boost.Fiber's timed waits read the real clock).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace lic {

enum class FiberBackend : std::uint8_t {
  context,      ///< boost::context::fiber driven directly: one jump per switch (the default)
  boost_fiber,  ///< Boost.Fiber with our own FIFO scheduling algorithm
};

std::string_view to_string(FiberBackend b);
/// "context" or "boost_fiber"; false for anything else.
bool parse_fiber_backend(std::string_view text, FiberBackend& out);

class FiberSystem {
 public:
  struct Fiber;
  /// A fiber's body. It returns the fiber to switch to when it ends; the ended fiber's stack is
  /// freed by the system.
  using Entry = Fiber* (*)(void* arg);

  explicit FiberSystem(FiberBackend backend);
  ~FiberSystem();
  FiberSystem(const FiberSystem&) = delete;
  FiberSystem& operator=(const FiberSystem&) = delete;

  FiberBackend backend() const { return backend_; }

  /// A fiber with a stack of `stack_bytes` (virtual; only touched pages are resident). It does
  /// not run until something switches to it.
  Fiber* create(std::size_t stack_bytes, Entry entry, void* arg);
  /// Suspends whatever runs now (a fiber or the thread's own context) and runs `to`.
  void switch_to(Fiber* to);
  /// The thread's own context as a fiber, to switch back to it.
  Fiber* main() const { return main_; }
  Fiber* current() const { return current_; }
  /// Fibers created and not yet ended.
  std::size_t live() const { return live_; }

 private:
  struct Impl;
  void finish(Fiber* f, Fiber* next);
  void reap();

  FiberBackend backend_;
  std::unique_ptr<Impl> impl_;
  Fiber* main_ = nullptr;
  Fiber* current_ = nullptr;
  Fiber* from_ = nullptr;          // the fiber that made the last switch (context backend)
  Fiber* pending_delete_ = nullptr;  // an ended fiber whose record the next one to run frees
  std::size_t live_ = 0;
};

}  // namespace lic
