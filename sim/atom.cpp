#include "sim/atom.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

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

// The index is an open-addressing hash table of atom indices (linear probing, at most half
// full), keyed by the text hash each entry already caches: 8-16 bytes an atom, where a
// std::map<std::string, index> node took 80 and a second copy of the text. Nothing iterates it.
struct Table {
  std::mutex mutex;
  std::vector<std::uint32_t> slots = std::vector<std::uint32_t>(1024, 0);  // 0: empty ("" is never looked up)
  std::array<std::atomic<Entry*>, kChunks>& chunks = g_chunks;
  std::uint32_t size = 0;
  std::uint64_t* hashes = g_first_hashes;  // what g_atom_hashes points to
  std::size_t hash_capacity = kFirstHashes;
  std::vector<std::uint64_t*> retired_hashes;  // earlier copies of `hashes`, never freed

  Table() { add("", stable_hash("")); }

  static const Entry& entry(std::uint32_t i) { return detail::atom_entry(i); }

  /// The slot holding `text`'s index, or the empty slot where it would go.
  std::size_t probe(std::string_view text, std::uint64_t hash) const {
    const std::size_t mask = slots.size() - 1;
    std::size_t k = static_cast<std::size_t>(hash) & mask;
    while (slots[k] != 0 && (entry(slots[k]).hash != hash || entry(slots[k]).text != text)) k = (k + 1) & mask;
    return k;
  }

  void grow() {
    std::vector<std::uint32_t> old = std::move(slots);
    slots.assign(old.size() * 2, 0);
    const std::size_t mask = slots.size() - 1;
    for (std::uint32_t i : old) {
      if (i == 0) continue;
      std::size_t k = static_cast<std::size_t>(entry(i).hash) & mask;
      while (slots[k] != 0) k = (k + 1) & mask;
      slots[k] = i;
    }
  }

  std::uint32_t add(std::string_view text, std::uint64_t hash) {
    const std::uint32_t i = size;
    if ((i >> kChunkBits) >= kChunks) throw std::length_error("atom table is full");
    Entry* chunk = chunks[i >> kChunkBits].load(std::memory_order_acquire);
    if (chunk == nullptr) {
      chunk = new Entry[kChunkSize];
      chunks[i >> kChunkBits].store(chunk, std::memory_order_release);
    }
    chunk[i & (kChunkSize - 1)] = Entry{hash, std::string(text)};
    if (i >= hash_capacity) {
      auto* bigger = new std::uint64_t[hash_capacity * 2]();
      std::copy(hashes, hashes + hash_capacity, bigger);
      // The old one is never freed (a reader may still hold it), only kept where the leak
      // checker sees it is still reachable.
      if (hashes != g_first_hashes) retired_hashes.push_back(hashes);
      hashes = bigger;
      hash_capacity *= 2;
      detail::g_atom_hashes.store(bigger, std::memory_order_release);
    }
    if (i != 0) hashes[i] = hash;  // the empty atom hashes to 0
    ++size;
    if (i != 0) {
      if (2 * (size + 1) > slots.size()) grow();
      slots[probe(text, hash)] = i;
    }
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
  const std::uint64_t hash = stable_hash(text);
  Table& t = table();
  std::lock_guard lock(t.mutex);
  const std::size_t k = t.probe(text, hash);
  index_ = t.slots[k] != 0 ? t.slots[k] : t.add(text, hash);
}

Atom Atom::find(std::string_view text) {
  Atom a;
  if (text.empty()) return a;
  const std::uint64_t hash = stable_hash(text);
  Table& t = table();
  std::lock_guard lock(t.mutex);
  a.index_ = t.slots[t.probe(text, hash)];
  return a;
}

}  // namespace lic
