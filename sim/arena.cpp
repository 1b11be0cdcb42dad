#include "sim/arena.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "sim/sanitizers.hpp"

namespace lic {
namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t round_up(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

/// A thread's spare record chunks. A sweep runs thousands of short simulations on each worker
/// thread, and each one's first record used to fault in a fresh 2 MiB huge page, which the kernel
/// zeroes whole: 30 % of a sweep of a small file (perf: clear_page_erms under spawn). A chunk
/// comes back here zeroed over the part its arena used, so it is exactly what a fresh mapping
/// would be: nothing a run reads can differ.
thread_local bool cache_gone = false;  // the thread is ending: arenas dying now unmap their chunks

class ChunkCache {
 public:
  ~ChunkCache() {
    cache_gone = true;
    for (void* c : spare_) huge_unmap(c, kHugePage);
  }
  void* take() {
    if (spare_.empty()) return huge_map(kHugePage);
    void* c = spare_.back();
    spare_.pop_back();
    return c;
  }
  void give(void* c, std::size_t used) {
    if (spare_.size() >= kKept) return huge_unmap(c, kHugePage);
#if LIC_ASAN
    ASAN_UNPOISON_MEMORY_REGION(c, kHugePage);
#endif
    std::memset(c, 0, used);
    spare_.push_back(c);
  }

 private:
  static constexpr std::size_t kKept = 8;  // 16 MiB per thread at most
  std::vector<void*> spare_;
};

/// The thread's cache; nullptr once the thread's thread-locals are being destroyed.
ChunkCache* chunk_cache() {
  static thread_local ChunkCache cache;
  return cache_gone ? nullptr : &cache;
}

void* take_chunk() {
  ChunkCache* c = chunk_cache();
  return c != nullptr ? c->take() : huge_map(kHugePage);
}

void give_chunk(void* chunk, std::size_t used) {
  ChunkCache* c = chunk_cache();
  if (c != nullptr) c->give(chunk, used);
  else huge_unmap(chunk, kHugePage);
}
}  // namespace

void* huge_map(std::size_t bytes) {
  const std::size_t size = round_up(bytes);
  // Over-map by one huge page and trim, so the region starts on a 2 MiB boundary.
  void* raw = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const std::uintptr_t tail = aligned + size;
  const std::uintptr_t raw_end = start + size + kHugePage;
  if (raw_end > tail) munmap(reinterpret_cast<void*>(tail), raw_end - tail);
  void* p = reinterpret_cast<void*>(aligned);
#if LIC_ASAN
  // The range may have been a fiber stack before (mapped, poisoned by frames, unmapped).
  ASAN_UNPOISON_MEMORY_REGION(p, size);
#endif
#ifdef MADV_HUGEPAGE
  madvise(p, size, MADV_HUGEPAGE);  // a hint: without THP the pages are ordinary ones
#endif
  return p;
}

void huge_unmap(void* p, std::size_t bytes) { munmap(p, round_up(bytes)); }

RecordArena::RecordArena(std::size_t record_bytes)
    : size_((record_bytes + alignof(std::max_align_t) - 1) / alignof(std::max_align_t) *
            alignof(std::max_align_t)) {}

RecordArena::~RecordArena() {
  // Every chunk but the last is carved to its end (less what cannot hold one more record).
  for (void* c : chunks_) give_chunk(c, c == chunks_.back() ? static_cast<std::size_t>(next_ - static_cast<char*>(c)) : kHugePage);
}

void* RecordArena::allocate() {
  if (free_ != nullptr) {
    Free* f = free_;
    free_ = f->next;
    return f;
  }
  if (next_ == nullptr || next_ + size_ > end_) {
    next_ = static_cast<char*>(take_chunk());
    end_ = next_ + kHugePage;
    chunks_.push_back(next_);
  }
  void* p = next_;
  next_ += size_;
  return p;
}

void RecordArena::deallocate(void* p) { free_ = ::new (p) Free{free_}; }

}  // namespace lic
