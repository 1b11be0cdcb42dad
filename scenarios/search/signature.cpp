#include "scenarios/search/signature.hpp"

#include <algorithm>
#include <bit>
#include <string_view>

#include "sim/trace_keys.hpp"
#include "supervision/events.hpp"

namespace lic::scenarios {

namespace {

/// FNV-1a over bytes, continued from `h`.
std::uint64_t mix(std::uint64_t h, std::string_view s) {
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

/// A word into the hash at once (a multiply and a shift: this runs a few times an event).
std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
  return h ^ (h >> 31);
}

constexpr std::uint64_t kBasis = 0xcbf29ce484222325ULL;

/// A role: the text with every run of digits folded to '#'.
std::string fold(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool digits = false;
  for (const char c : text) {
    const bool d = c >= '0' && c <= '9';
    if (d && !digits) out += '#';
    if (!d) out += c;
    digits = d;
  }
  return out;
}

/// AFL's hit-count buckets.
int count_bucket(std::uint32_t n) {
  if (n <= 3) return static_cast<int>(n);
  if (n <= 7) return 4;
  if (n <= 15) return 5;
  if (n <= 31) return 6;
  return 7;
}

bool traffic(EventKind k) { return k == EventKind::send || k == EventKind::deliver; }

/// What an event is, with its role: its kind, its name (system events), and the role of the
/// process it is about (its label's path, or the child or service its `id` names).
struct Key {
  std::uint64_t what = 0;  ///< kind and name
  std::uint64_t role = 0;  ///< the folded role
};

/// The hash of each atom's folded text, kept by the atom's index (the fold builds a string; a run
/// names a few hundred atoms, over many thousand events). An atom's text never changes, so one
/// cache a thread serves every run the thread makes; what it holds depends on the texts alone.
class RoleCache {
 public:
  std::uint64_t of(Atom a) {
    thread_local std::vector<std::uint64_t> hash;
    thread_local std::vector<bool> known;
    const std::uint32_t i = a.index();
    if (i >= hash.size()) hash.resize(i + 1 + i / 2, 0), known.resize(i + 1 + i / 2, false);
    if (!known[i]) hash[i] = mix(kBasis, fold(a.text())), known[i] = true;
    return hash[i];
  }
};

Key key_of(const TraceEvent& e, RoleCache& roles) {
  Key k;
  // By the texts' hashes, never the atoms' indices: those depend on which thread interned a name
  // first, and the signature must not.
  k.what = mix(mix(kBasis, static_cast<std::uint64_t>(e.kind)), roles.of(e.name));
  std::uint64_t role = e.label.name.empty() ? mix(roles.of(e.node), std::string_view("@node")) : roles.of(e.label.name);
  if (e.kind == EventKind::system)
    if (const Atom* id = e.field<Atom>(keys::kId)) role = mix(role, roles.of(*id));
  k.role = role;
  return k;
}

std::uint32_t slot(std::uint64_t h) {
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 32;
  return static_cast<std::uint32_t>(h & (kSignatureSlots - 1));
}

/// A table keyed by two words, for the few hundred roles of a run (std::map's node a key cost more
/// than the rest of a short run's signature): open addressing, linear probing, never erased.
/// Only looked up and read as a whole set, so its order never reaches the signature.
template <class V>
class PairTable {
 public:
  struct Entry {
    std::uint64_t a = 0, b = 0;
    V value{};
    bool used = false;
  };
  PairTable() : entries_(kFirst) {}
  /// The value of (a, b), made V{} when new.
  V& operator()(std::uint64_t a, std::uint64_t b) {
    if (2 * (size_ + 1) > entries_.size()) grow();
    Entry& e = find(a, b);
    if (!e.used) e = Entry{a, b, V{}, true}, ++size_;
    return e.value;
  }
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  static constexpr std::size_t kFirst = 64;
  Entry& find(std::uint64_t a, std::uint64_t b) {
    const std::size_t mask = entries_.size() - 1;
    std::uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ULL)) * 0xbf58476d1ce4e5b9ULL;
    for (std::size_t i = static_cast<std::size_t>(h ^ (h >> 32)) & mask;; i = (i + 1) & mask)
      if (!entries_[i].used || (entries_[i].a == a && entries_[i].b == b)) return entries_[i];
  }
  void grow() {
    std::vector<Entry> old(entries_.size() * 2);
    old.swap(entries_);
    for (const Entry& e : old)
      if (e.used) find(e.a, e.b) = e;
  }
  std::vector<Entry> entries_;
  std::size_t size_ = 0;
};

/// How long after a fault a reaction counts as its own.
constexpr Duration kReactionWindow = kSecond;
/// How many reactions a fault pairs with at most.
constexpr int kReactions = 8;

}  // namespace

int margin_bucket(double margin) {
  if (margin < 0) return 0;
  if (margin == 0) return 1;
  if (margin <= 0.05) return 2;
  if (margin <= 0.10) return 3;
  if (margin <= 0.25) return 4;
  if (margin <= 0.50) return 5;
  return 6;
}

Signature signature_of(const EventLog& events, const std::vector<CheckResult>& checks) {
  // A long run: the map itself, a bit a slot, set as the events go and read out in slot order at
  // the end (no sort of the many repeated slots). A short one: the slots in a list, sorted once
  // (clearing and reading 8 KiB would cost more than its run).
  const bool small = events.size() < 512;
  std::vector<std::uint64_t> bits(small ? 0 : kSignatureSlots / 64, 0);
  std::vector<std::uint32_t> list;
  if (small) list.reserve(3 * events.size() + 2 * checks.size() + 8);
  struct Out {
    std::vector<std::uint64_t>& bits;
    std::vector<std::uint32_t>& list;
    bool small;
    void push_back(std::uint32_t slot) {
      if (small) list.push_back(slot);
      else bits[slot >> 6] |= std::uint64_t{1} << (slot & 63);
    }
  } out{bits, list, small};
  RoleCache roles;
  PairTable<std::uint64_t> last;     // (role, 0) -> its previous event's `what`
  PairTable<std::uint32_t> counts;   // (role, what) -> how often
  struct Open {
    std::uint64_t fault;  // the fault's kind and target role
    Time until;
    int left;
  };
  std::vector<Open> open;  // faults whose reactions are still being paired
  for (const TraceEvent& e : events) {
    if (traffic(e.kind)) continue;
    const Key k = key_of(e, roles);
    out.push_back(slot(mix(k.what, k.role)));
    std::uint64_t& previous = last(k.role, 0);
    out.push_back(slot(mix(mix(mix(kBasis, std::string_view("edge")), previous), mix(k.what, k.role))));
    previous = k.what;
    if (e.kind == EventKind::exit || e.kind == EventKind::node_down ||
        (e.kind == EventKind::system && (e.name == supervision::events::kChildStarted ||
                                         e.name == supervision::events::kReachedMax ||
                                         e.name == supervision::events::kServiceRetry)))
      ++counts(k.role, k.what);
    std::erase_if(open, [&](const Open& o) { return e.time > o.until || o.left <= 0; });
    for (Open& o : open) {
      out.push_back(slot(mix(mix(o.fault, std::string_view("then")), mix(k.what, k.role))));
      --o.left;
    }
    if (e.kind == EventKind::system && e.name == fault_events::kFaultInjected) {
      const Atom* kind = e.field<Atom>(keys::kKind);
      const Atom* target = e.field<Atom>(keys::kTarget);
      const std::uint64_t f = mix(kind != nullptr ? roles.of(*kind) : kBasis, target != nullptr ? roles.of(*target) : kBasis);
      open.push_back(Open{f, e.time + kReactionWindow, kReactions});
    }
  }
  for (const auto& e : counts.entries())
    if (e.used)
      out.push_back(slot(mix(mix(mix(kBasis, std::string_view("count")), e.a ^ (e.b * 31)), static_cast<std::uint64_t>(count_bucket(e.value)))));
  for (const CheckResult& c : checks) {
    const std::uint64_t h = mix(mix(kBasis, std::string_view("check")), c.name);
    out.push_back(slot(mix(h, c.passed ? std::string_view("pass") : std::string_view(c.kind))));
    if (c.margin) out.push_back(slot(mix(mix(h, std::string_view("margin")), static_cast<std::uint64_t>(margin_bucket(*c.margin)))));
  }
  Signature sig;
  if (small) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    sig.slots = std::move(list);
    return sig;
  }
  for (std::size_t w = 0; w < bits.size(); ++w)
    for (std::uint64_t b = bits[w]; b != 0; b &= b - 1) sig.slots.push_back(static_cast<std::uint32_t>(w * 64 + std::countr_zero(b)));
  return sig;
}

}  // namespace lic::scenarios
