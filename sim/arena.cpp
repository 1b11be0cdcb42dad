#include "sim/arena.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "sim/chunk_cache.hpp"
#include "sim/sanitizers.hpp"

namespace lic {
namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t round_up(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }

/// A thread's spare record chunks (sim/chunk_cache.hpp). Each one's first record used to fault in
/// a fresh 2 MiB huge page, which the kernel zeroes whole: 30 % of a sweep of a small file (perf:
/// clear_page_erms under spawn). A chunk comes back zeroed over the part its arena used, so it is
/// exactly what a fresh mapping would be: nothing a run reads can differ.
struct RecordChunks {
  static constexpr std::size_t kKept = 8;  // 16 MiB per thread at most
  static void unmap(void* c) { huge_unmap(c, kHugePage); }
};
using RecordChunkCache = ChunkCache<RecordChunks>;

void* take_chunk() {
  RecordChunkCache* c = RecordChunkCache::of_thread();
  void* chunk = c != nullptr ? c->take() : nullptr;
  return chunk != nullptr ? chunk : huge_map(kHugePage);
}

void give_chunk(void* chunk, std::size_t used) {
  RecordChunkCache* c = RecordChunkCache::of_thread();
  if (c == nullptr || c->full()) return huge_unmap(chunk, kHugePage);
#if LIC_ASAN
  ASAN_UNPOISON_MEMORY_REGION(chunk, kHugePage);
#endif
  std::memset(chunk, 0, used);
  c->give(chunk);
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

RecordArena::RecordArena(std::size_t record_bytes, std::size_t align) {
  if (align < alignof(std::max_align_t)) align = alignof(std::max_align_t);
  if ((align & (align - 1)) != 0 || align > kHugePage) throw std::invalid_argument("RecordArena: alignment not a power of two up to 2 MiB");
  size_ = (record_bytes + align - 1) / align * align;
  if (size_ > kHugePage) throw std::invalid_argument("RecordArena: a record larger than its 2 MiB chunk");
}

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
