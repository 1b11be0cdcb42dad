#include "scenarios/search/signature.hpp"

#include <algorithm>
#include <bit>
#include <map>
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
  std::map<std::uint64_t, std::uint64_t> last;  // role -> its previous event's `what`
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint32_t> counts;  // (role, what) -> how often
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
    const auto [it, fresh] = last.try_emplace(k.role, 0);
    out.push_back(slot(mix(mix(mix(kBasis, std::string_view("edge")), it->second), mix(k.what, k.role))));
    it->second = k.what;
    if (e.kind == EventKind::exit || e.kind == EventKind::node_down ||
        (e.kind == EventKind::system && (e.name == supervision::events::kChildStarted ||
                                         e.name == supervision::events::kReachedMax ||
                                         e.name == supervision::events::kServiceRetry)))
      ++counts[{k.role, k.what}];
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
  for (const auto& [rw, n] : counts)
    out.push_back(slot(mix(mix(mix(kBasis, std::string_view("count")), rw.first ^ (rw.second * 31)),
                           static_cast<std::uint64_t>(count_bucket(n)))));
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
