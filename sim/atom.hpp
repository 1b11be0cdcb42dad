#pragma once
// Interned symbols, like Erlang atoms: message tags, exit-reason details, node names, labels,
// trace field keys. An Atom is a 32-bit index into one process-wide table; the trace hash uses
// the atom's text hash, never the index, so interning order (which can differ between runs in
// one OS process, e.g. in a sweep) never reaches the hash.

#include <cstdint>
#include <string_view>

namespace lic {

class Atom {
 public:
  constexpr Atom() = default;  // the empty atom ""
  explicit Atom(std::string_view text);

  std::string_view text() const;
  /// stable_hash(text()), cached at interning; 0 for the empty atom.
  std::uint64_t hash() const;
  std::uint32_t index() const { return index_; }
  bool empty() const { return index_ == 0; }

  friend bool operator==(Atom a, Atom b) { return a.index_ == b.index_; }
  /// Orders by text so ordered containers of atoms iterate the same in every run.
  friend bool operator<(Atom a, Atom b) { return a.index_ != b.index_ && a.text() < b.text(); }

 private:
  std::uint32_t index_ = 0;
};

}  // namespace lic
