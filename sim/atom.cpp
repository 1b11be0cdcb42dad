#include "sim/atom.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "sim/rng.hpp"

namespace lic {

// Constant-initialised, so reading an atom's text or hash needs no static-init guard.
constinit std::array<std::atomic<detail::AtomEntry*>, detail::kAtomChunks> detail::g_atom_chunks{};

namespace {
constexpr std::size_t kFirstHashes = 4096;
std::uint64_t g_first_hashes[kFirstHashes] = {};  // the first 4096 atoms' hashes; [0] stays 0
}  // namespace
constinit std::atomic<const std::uint64_t*> detail::g_atom_hashes{g_first_hashes};

namespace {

using detail::AtomEntry;
using Entry = AtomEntry;
constexpr std::size_t kChunkBits = detail::kAtomChunkBits;
constexpr std::size_t kChunkSize = std::size_t{1} << kChunkBits;
constexpr std::size_t kChunks = detail::kAtomChunks;
auto& g_chunks = detail::g_atom_chunks;

struct Table {
  std::mutex mutex;
  std::map<std::string, std::uint32_t, std::less<>> index;
  std::array<std::atomic<Entry*>, kChunks>& chunks = g_chunks;
  std::uint32_t size = 0;
  std::uint64_t* hashes = g_first_hashes;  // what g_atom_hashes points to
  std::size_t hash_capacity = kFirstHashes;

  Table() { add(""); }

  std::uint32_t add(std::string_view text) {
    const std::uint32_t i = size;
    if ((i >> kChunkBits) >= kChunks) throw std::length_error("atom table is full");
    Entry* chunk = chunks[i >> kChunkBits].load(std::memory_order_acquire);
    if (chunk == nullptr) {
      chunk = new Entry[kChunkSize];
      chunks[i >> kChunkBits].store(chunk, std::memory_order_release);
    }
    chunk[i & (kChunkSize - 1)] = Entry{stable_hash(text), std::string(text)};
    if (i >= hash_capacity) {
      auto* bigger = new std::uint64_t[hash_capacity * 2]();  // the old one is never freed
      std::copy(hashes, hashes + hash_capacity, bigger);
      hashes = bigger;
      hash_capacity *= 2;
      detail::g_atom_hashes.store(bigger, std::memory_order_release);
    }
    if (i != 0) hashes[i] = chunk[i & (kChunkSize - 1)].hash;  // the empty atom hashes to 0
    index.emplace(std::string(text), i);
    ++size;
    return i;
  }

};



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



}  // namespace lic
