#pragma once
// Interned symbols, like Erlang atoms: message tags, exit-reason details, node names, labels,
// trace field keys. An Atom is a 32-bit index into one process-wide table; the trace hash uses
// the atom's text hash, never the index, so interning order (which can differ between runs in
// one OS process, e.g. in a sweep) never reaches the hash.

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace lic {

namespace detail {
struct AtomEntry {
  std::uint64_t hash;
  std::string text;
};
inline constexpr std::size_t kAtomChunkBits = 12;
inline constexpr std::size_t kAtomChunks = 4096;
/// Chunked so entries never move: readers take no lock (an index reaches a reader only after
/// the interning call that made it returned, which published its chunk under the table's mutex).
extern std::array<std::atomic<AtomEntry*>, kAtomChunks> g_atom_chunks;
/// Every atom's hash by index, flat, so Atom::hash() is one load (the trace hashes up to four
/// atoms an event). Index 0, the empty atom, holds 0. The array only grows: a bigger copy is
/// published under the table's mutex and the old one is left in place (never freed), so a reader
/// holding it still reads the indices it knows.
extern std::atomic<const std::uint64_t*> g_atom_hashes;
inline const AtomEntry& atom_entry(std::uint32_t i) {
  return g_atom_chunks[i >> kAtomChunkBits].load(std::memory_order_acquire)
      [i & ((std::size_t{1} << kAtomChunkBits) - 1)];
}
}  // namespace detail

class Atom {
 public:
  constexpr Atom() = default;  // the empty atom ""
  explicit Atom(std::string_view text);
  /// The atom of `text` if it was ever interned, else the empty atom: a lookup that adds
  /// nothing to the table (a path no process has ever held is not made an atom).
  static Atom find(std::string_view text);

  std::string_view text() const {
    if (index_ == 0) return {};
    return detail::atom_entry(index_).text;
  }
  /// stable_hash(text()), cached at interning; 0 for the empty atom (most kernel events have
  /// empty slots, and they cost no lookup).
  std::uint64_t hash() const { return detail::g_atom_hashes.load(std::memory_order_acquire)[index_]; }
  std::uint32_t index() const { return index_; }
  bool empty() const { return index_ == 0; }

  friend bool operator==(Atom a, Atom b) { return a.index_ == b.index_; }
  /// Orders by text so ordered containers of atoms iterate the same in every run.
  friend bool operator<(Atom a, Atom b) { return a.index_ != b.index_ && a.text() < b.text(); }

 private:
  friend class EventLog;  // decodes atoms from the indices it keeps
  std::uint32_t index_ = 0;
};

}  // namespace lic
