// The only file that includes Boost.Context / Boost.Fiber (STYLE.md: hide the execution mechanism
// in one file). Two backends behind FiberSystem::switch_to:
//  - context: boost::context::fiber resumed directly, one jump_fcontext per switch;
//  - boost_fiber: Boost.Fiber fibers under our FIFO algorithm; a switch schedules the target and
//    suspends the current fiber, so the scheduler always finds exactly one ready fiber.
// The benchmark measures both (`letitcrash bench --backend ...`); docs/kernel.md has the figures.

#include "sim/fiber.hpp"

#include <sys/mman.h>

#include <boost/context/fiber.hpp>
#include <boost/context/stack_context.hpp>
#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/context.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/operations.hpp>
#include <boost/fiber/scheduler.hpp>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <new>
#include <vector>

#include "sim/sanitizers.hpp"

namespace lic {
namespace {

constexpr std::size_t kPage = 4096;

/// Stacks carved from large anonymous mappings, recycled by size. Untouched pages of a stack
/// cost no resident memory, so a million idle fibers cost only the pages their frames touched.
/// There are no guard pages: one mprotect per stack would split the mapping into a VMA per
/// stack, and a million of them exceed vm.max_map_count. Stack sizes are generous instead.
/// A thread's spare stack slabs, by size, kept for the next simulation: a sweep runs thousands of
/// short simulations on each worker thread, and a mapping and an unmapping of two slabs per seed
/// (16 and 4 MiB) made two workers queue on the process's mmap lock and interrupt each other with
/// TLB shootdowns (`sweep --jobs 2` of a small file ran slower than `--jobs 1`). A stack handed out
/// is unpoisoned (allocate) and written before it is read, as a stack recycled within one
/// simulation already is.
thread_local bool t_slabs_gone = false;  // the thread is ending: slabs go back to the OS

class SlabCache {
 public:
  ~SlabCache() {
    t_slabs_gone = true;
    for (auto& [bytes, list] : spare_)
      for (void* p : list) munmap(p, bytes);
  }
  void* take(std::size_t bytes) {
    auto& list = spare_[bytes];
    if (list.empty()) return nullptr;
    void* p = list.back();
    list.pop_back();
    return p;
  }
  bool give(void* p, std::size_t bytes) {
    auto& list = spare_[bytes];
    if (list.size() >= kKept) return false;
    list.push_back(p);
    return true;
  }

 private:
  static constexpr std::size_t kKept = 4;  // per slab size
  std::map<std::size_t, std::vector<void*>> spare_;
};

SlabCache* slab_cache() {
  static thread_local SlabCache cache;
  return t_slabs_gone ? nullptr : &cache;
}

class StackPool {
 public:
  ~StackPool() {
    for (auto& [ptr, bytes] : slabs_) {
#if LIC_ASAN
      // Stack frames leave poisoned shadow behind; whatever is mapped here next must not see it.
      ASAN_UNPOISON_MEMORY_REGION(ptr, bytes);
#endif
      SlabCache* cache = slab_cache();
      if (cache == nullptr || !cache->give(ptr, bytes)) munmap(ptr, bytes);
    }
  }

  void* take(std::size_t bytes) {
    auto& free_list = free_[bytes];
    if (!free_list.empty()) {
      void* p = free_list.back();
      free_list.pop_back();
      return p;
    }
    Carve& c = carve_[bytes];
    if (c.next == c.end) {
      const std::size_t slab = bytes * kStacksPerSlab;
      SlabCache* cache = slab_cache();
      void* p = cache != nullptr ? cache->take(slab) : nullptr;
      if (p == nullptr) p = mmap(nullptr, slab, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      slabs_.emplace_back(p, slab);
      c.next = static_cast<char*>(p);
      c.end = c.next + slab;
    }
    void* p = c.next;
    c.next += bytes;
    return p;
  }

  void give(void* p, std::size_t bytes) { free_[bytes].push_back(p); }

 private:
  static constexpr std::size_t kStacksPerSlab = 64;
  struct Carve {
    char* next = nullptr;
    char* end = nullptr;
  };
  std::map<std::size_t, std::vector<void*>> free_;
  std::map<std::size_t, Carve> carve_;
  std::vector<std::pair<void*, std::size_t>> slabs_;
};

/// Models Boost's StackAllocator concept over a StackPool.
struct StackInfo {
  const void* bottom = nullptr;  // lowest address
  std::size_t size = 0;
};

struct PoolAllocator {
  // Shared: Boost.Fiber frees an ended fiber's stack lazily, possibly after the FiberSystem.
  std::shared_ptr<StackPool> pool;
  std::size_t bytes;
  StackInfo* info;

  boost::context::stack_context allocate() {
    boost::context::stack_context sc;
    void* base = pool->take(bytes);
#if LIC_ASAN
    // A recycled stack still carries the poisoned redzones of its last owner's frames.
    ASAN_UNPOISON_MEMORY_REGION(base, bytes);
#endif
    info->bottom = base;
    info->size = bytes;
    sc.size = bytes;
    sc.sp = static_cast<char*>(base) + bytes;  // stacks grow down
    return sc;
  }
  void deallocate(boost::context::stack_context& sc) noexcept {
    pool->give(static_cast<char*>(sc.sp) - sc.size, sc.size);
  }
};

/// Boost.Fiber scheduling algorithm: a FIFO ready queue and nothing else. It never sleeps:
/// FiberSystem always makes the target ready before suspending, so suspend_until would mean a
/// broken invariant, and it aborts rather than block on the real clock.
class FifoAlgorithm final : public boost::fibers::algo::algorithm {
 public:
  void awakened(boost::fibers::context* ctx) noexcept override { ctx->ready_link(queue_); }
  boost::fibers::context* pick_next() noexcept override {
    if (queue_.empty()) return nullptr;
    boost::fibers::context* ctx = &queue_.front();
    queue_.pop_front();
    return ctx;
  }
  bool has_ready_fibers() const noexcept override { return !queue_.empty(); }
  void suspend_until(std::chrono::steady_clock::time_point const&) noexcept override {
    std::fputs("letitcrash: fiber scheduler found no ready fiber (kernel invariant broken)\n",
               stderr);
    std::abort();
  }
  void notify() noexcept override {}

 private:
  boost::fibers::scheduler::ready_queue_type queue_;
};

thread_local bool t_fifo_installed = false;

}  // namespace

struct FiberSystem::Impl {
  std::shared_ptr<StackPool> stacks = std::make_shared<StackPool>();
};

struct FiberSystem::Fiber {
  StackInfo stack;
  void* fake_stack = nullptr;  // ASan's bookkeeping for this fiber's stack
  Entry entry = nullptr;
  void* arg = nullptr;
  std::size_t stack_bytes = 0;
  bool started = false;
  boost::context::fiber ctx;                   // context backend: how to resume this fiber
  boost::fibers::context* bctx = nullptr;      // boost_fiber backend: its Boost.Fiber context
};

std::string_view to_string(FiberBackend b) {
  return b == FiberBackend::context ? "context" : "boost_fiber";
}

bool parse_fiber_backend(std::string_view text, FiberBackend& out) {
  if (text == "context") {
    out = FiberBackend::context;
    return true;
  }
  if (text == "boost_fiber") {
    out = FiberBackend::boost_fiber;
    return true;
  }
  return false;
}

FiberSystem::FiberSystem(FiberBackend backend) : backend_(backend), impl_(std::make_unique<Impl>()) {
  main_ = new Fiber();
  main_->started = true;
  current_ = main_;
  if (backend_ == FiberBackend::boost_fiber) {
    if (!t_fifo_installed) {
      boost::fibers::use_scheduling_algorithm<FifoAlgorithm>();
      t_fifo_installed = true;
    }
    main_->bctx = boost::fibers::context::active();
  }
}

FiberSystem::~FiberSystem() {
  // Every fiber must have ended (the Simulation unwinds them); a live one would own a stack
  // that is about to be unmapped.
  assert(live_ == 0 && current_ == main_);
  reap();
  delete main_;
}

FiberSystem::Fiber* FiberSystem::create(std::size_t stack_bytes, Entry entry, void* arg) {
  auto* f = new Fiber();
  f->entry = entry;
  f->arg = arg;
  f->stack_bytes = (stack_bytes + kPage - 1) / kPage * kPage;
  ++live_;
  return f;
}

void FiberSystem::reap() {
  delete pending_delete_;
  pending_delete_ = nullptr;
}

void FiberSystem::finish(Fiber* f, Fiber* next) {
  --live_;
  current_ = next;
  pending_delete_ = f;
}

void FiberSystem::switch_to(Fiber* to) {
  Fiber* from = current_;
  if (to == from) return;
  current_ = to;
  if (backend_ == FiberBackend::context) {
    from_ = from;
    if (!to->started) {
      to->started = true;
      to->ctx = boost::context::fiber(
          std::allocator_arg, PoolAllocator{impl_->stacks, to->stack_bytes, &to->stack},
          [this, to](boost::context::fiber&& caller) {
#if LIC_ASAN
            // Learns the stack we came from (the thread's own stack, the first time).
            __sanitizer_finish_switch_fiber(nullptr, &from_->stack.bottom, &from_->stack.size);
#endif
            if (caller) from_->ctx = std::move(caller);
            reap();
            Fiber* next = to->entry(to->arg);
            finish(to, next);
#if LIC_ASAN
            __sanitizer_start_switch_fiber(nullptr, next->stack.bottom, next->stack.size);
#endif
            return std::move(next->ctx);
          });
    }
#if LIC_ASAN
    __sanitizer_start_switch_fiber(&from->fake_stack, to->stack.bottom, to->stack.size);
#endif
    boost::context::fiber back = std::move(to->ctx).resume();
#if LIC_ASAN
    __sanitizer_finish_switch_fiber(from->fake_stack, nullptr, nullptr);
#endif
    // Back in `from`: whoever switched here left its continuation in `back` (empty if it ended).
    if (back) from_->ctx = std::move(back);
    reap();
    return;
  }
  // boost_fiber backend. Boost.Fiber switches inside its library, unannotated: we tell ASan
  // around the suspend, where the jump happens (Boost.Fiber goes straight from suspend() to the
  // one ready fiber, never through its dispatcher, in this protocol).
  boost::fibers::context* self = boost::fibers::context::active();
  from_ = from;
  if (!to->started) {
    to->started = true;
    boost::fibers::fiber fb(std::allocator_arg, PoolAllocator{impl_->stacks, to->stack_bytes, &to->stack},
                            [this, to] {
#if LIC_ASAN
                              __sanitizer_finish_switch_fiber(nullptr, &from_->stack.bottom,
                                                              &from_->stack.size);
#endif
                              to->bctx = boost::fibers::context::active();
                              reap();
                              Fiber* next = to->entry(to->arg);
                              finish(to, next);
                              boost::fibers::context::active()->schedule(next->bctx);
#if LIC_ASAN
                              __sanitizer_start_switch_fiber(nullptr, next->stack.bottom,
                                                             next->stack.size);
#endif
                            });
    fb.detach();  // launched with launch::post: it is now the only ready fiber
  } else {
    self->schedule(to->bctx);
  }
#if LIC_ASAN
  __sanitizer_start_switch_fiber(&from->fake_stack, to->stack.bottom, to->stack.size);
#endif
  self->suspend();
#if LIC_ASAN
  __sanitizer_finish_switch_fiber(from->fake_stack, nullptr, nullptr);
#endif
  reap();
}

}  // namespace lic
