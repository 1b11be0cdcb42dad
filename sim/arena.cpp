#include "sim/arena.hpp"

#include <sys/mman.h>

#include <cstdint>

#include "sim/sanitizers.hpp"

namespace lic {
namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::size_t round_up(std::size_t bytes) { return (bytes + kHugePage - 1) / kHugePage * kHugePage; }
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
  for (void* c : chunks_) huge_unmap(c, kHugePage);
}

void* RecordArena::allocate() {
  if (free_ != nullptr) {
    Free* f = free_;
    free_ = f->next;
    return f;
  }
  if (next_ == nullptr || next_ + size_ > end_) {
    next_ = static_cast<char*>(huge_map(kHugePage));
    end_ = next_ + kHugePage;
    chunks_.push_back(next_);
  }
  void* p = next_;
  next_ += size_;
  return p;
}

void RecordArena::deallocate(void* p) { free_ = ::new (p) Free{free_}; }

}  // namespace lic
