#pragma once
// Memory for the kernel's big tables and its many small records, backed by transparent huge
// pages where the kernel offers them (madvise). With a million processes the working set is
// hundreds of MiB touched at random; in 4 KiB pages nearly every access is a TLB miss, in
// 2 MiB pages almost none (the W3 benchmark at 1M processes: docs/benchmarks.md).

#include <cstddef>
#include <new>
#include <vector>

namespace lic {

/// Maps `bytes` (rounded up to 2 MiB) aligned to 2 MiB and asks for huge pages.
void* huge_map(std::size_t bytes);
void huge_unmap(void* p, std::size_t bytes);

/// Fixed-size records carved from 2 MiB chunks, recycled through a free list. Every record is
/// aligned to `align` (a power of two, at most 2 MiB): chunks start on a 2 MiB boundary and the
/// record size is rounded up to a multiple of it.
class RecordArena {
 public:
  explicit RecordArena(std::size_t record_bytes, std::size_t align = alignof(std::max_align_t));
  ~RecordArena();
  RecordArena(const RecordArena&) = delete;
  RecordArena& operator=(const RecordArena&) = delete;

  void* allocate();
  void deallocate(void* p);

 private:
  struct Free {
    Free* next;
  };
  std::size_t size_;
  std::vector<void*> chunks_;
  char* next_ = nullptr;
  char* end_ = nullptr;
  Free* free_ = nullptr;
};

/// A std allocator that puts large arrays (>= 2 MiB) on huge pages; small ones use operator new.
template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr std::size_t kHuge = std::size_t{2} << 20;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) {}  // NOLINT: rebinding

  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHuge) return static_cast<T*>(::operator new(bytes));
    return static_cast<T*>(huge_map(bytes));
  }
  void deallocate(T* p, std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHuge) {
      ::operator delete(static_cast<void*>(p));
    } else {
      huge_unmap(p, bytes);
    }
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

}  // namespace lic
