#include "sim/atom.hpp"

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "sim/rng.hpp"

namespace lic {
namespace {

struct Entry {
  std::string text;
  std::uint64_t hash;
};

// Chunked so entries never move: readers hold no lock (an index reaches a reader only after the
// interning call that made it returned, which published the chunk under the mutex).
constexpr std::size_t kChunkBits = 12;
constexpr std::size_t kChunkSize = std::size_t{1} << kChunkBits;
constexpr std::size_t kChunks = 4096;

// Constant-initialised, so reading an atom's text or hash needs no static-init guard.
constinit std::array<std::atomic<Entry*>, kChunks> g_chunks{};

struct Table {
  std::mutex mutex;
  std::map<std::string, std::uint32_t, std::less<>> index;
  std::array<std::atomic<Entry*>, kChunks>& chunks = g_chunks;
  std::uint32_t size = 0;

  Table() { add(""); }

  std::uint32_t add(std::string_view text) {
    const std::uint32_t i = size;
    if ((i >> kChunkBits) >= kChunks) throw std::length_error("atom table is full");
    Entry* chunk = chunks[i >> kChunkBits].load(std::memory_order_acquire);
    if (chunk == nullptr) {
      chunk = new Entry[kChunkSize];
      chunks[i >> kChunkBits].store(chunk, std::memory_order_release);
    }
    chunk[i & (kChunkSize - 1)] = Entry{std::string(text), stable_hash(text)};
    index.emplace(std::string(text), i);
    ++size;
    return i;
  }

};

const Entry& entry(std::uint32_t i) {
  return g_chunks[i >> kChunkBits].load(std::memory_order_acquire)[i & (kChunkSize - 1)];
}

Table& table() {
  static Table* t = new Table();  // never destroyed: atoms may be used during static teardown
  return *t;
}

}  // namespace

Atom::Atom(std::string_view text) {
  if (text.empty()) return;
  Table& t = table();
  std::lock_guard lock(t.mutex);
  auto it = t.index.find(text);
  index_ = it != t.index.end() ? it->second : t.add(text);
}

std::string_view Atom::text() const {
  if (index_ == 0) return {};
  return entry(index_).text;
}

std::uint64_t Atom::hash() const {
  // The empty atom hashes to 0: most kernel events have empty slots, and they cost no lookup.
  if (index_ == 0) return 0;
  return entry(index_).hash;
}

}  // namespace lic
