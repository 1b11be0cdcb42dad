#include "scenarios/search/signature.hpp"

#include <algorithm>
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

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
  return h;
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

Key key_of(const TraceEvent& e) {
  Key k;
  k.what = mix(mix(kBasis, static_cast<std::uint64_t>(e.kind)), e.name.text());
  std::string role = fold(e.label.name.text());
  if (e.kind == EventKind::system)
    if (const std::string id = e.text(keys::kId); !id.empty()) role += "/" + fold(id);
  if (role.empty()) role = "@" + fold(e.node.text());
  k.role = mix(kBasis, role);
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
  std::vector<std::uint32_t> out;
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
    const Key k = key_of(e);
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
      const std::uint64_t f = mix(mix(kBasis, e.text(keys::kKind)), fold(e.text(keys::kTarget)));
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
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return Signature{std::move(out)};
}

}  // namespace lic::scenarios
