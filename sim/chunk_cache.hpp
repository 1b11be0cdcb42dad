#pragma once
// A thread's spare memory chunks of one kind, for its next simulation. A sweep runs thousands of
// short simulations on each worker thread, and each one's first record or event would otherwise
// fault in fresh pages (on a virtual machine about 2 us a 4 KiB page, and a 2 MiB huge page is
// zeroed whole). Used by the record arena (sim/arena.cpp) and the kept trace (sim/trace.cpp).

#include <cstddef>
#include <vector>

namespace lic {

/// `Kind` says how many chunks a thread keeps (`static constexpr std::size_t kKept`) and how one
/// is given back to the kernel (`static void unmap(void*)`). What a chunk holds when it is given
/// is the caller's business (the arena zeroes it, the trace needs nothing).
template <class Kind>
class ChunkCache {
 public:
  /// The calling thread's cache; nullptr once the thread's thread-locals are being destroyed
  /// (objects dying then unmap their chunks themselves).
  static ChunkCache* of_thread() {
    static thread_local ChunkCache cache;
    return gone_ ? nullptr : &cache;
  }

  ChunkCache() = default;
  ChunkCache(const ChunkCache&) = delete;
  ChunkCache& operator=(const ChunkCache&) = delete;
  ~ChunkCache() {
    gone_ = true;
    for (void* c : spare_) Kind::unmap(c);
  }

  /// A spare chunk, or nullptr when there is none.
  void* take() {
    if (spare_.empty()) return nullptr;
    void* c = spare_.back();
    spare_.pop_back();
    return c;
  }
  bool full() const { return spare_.size() >= Kind::kKept; }
  /// Keeps `c` for the next take(); false (and `c` is still the caller's) when full.
  bool give(void* c) {
    if (full()) return false;
    spare_.push_back(c);
    return true;
  }

 private:
  static thread_local inline bool gone_ = false;  // the thread is ending
  std::vector<void*> spare_;
};

}  // namespace lic
