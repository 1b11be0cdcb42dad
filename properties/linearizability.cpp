#include "properties/linearizability.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <utility>

namespace lic::properties {

namespace {

// ---- the built-in models -------------------------------------------------------------------

// A register's state: "" for nil (nothing written yet), else "=" and the value.
ModelState reg(const std::string& v) { return "=" + v; }
bool reads_as(const ModelState& s, const std::optional<std::string>& v) { return v ? s == reg(*v) : s.empty(); }

bool register_step(const ModelState& s, const Op& op, ModelState& next, bool cas) {
  next = s;
  if (op.f == "read") return op.status != OpStatus::ok || reads_as(s, op.value);
  if (op.f == "write") {
    if (op.status != OpStatus::fail) next = reg(op.arg);
    return true;
  }
  if (cas && op.f == "cas") {
    const bool holds = s == reg(op.arg);
    if (op.status == OpStatus::ok) {  // it swapped: the register held `arg`
      next = reg(op.arg2);
      return holds;
    }
    if (op.status == OpStatus::fail) return !holds;  // its compare failed: it did not hold `arg`
    if (holds) next = reg(op.arg2);                  // unknown: swapped if it could, where it took effect
    return true;
  }
  return false;
}

/// A key's value in a map: "" before anything is written (a read of a missing key reads "").
bool kv_step(const ModelState& s, const Op& op, ModelState& next) {
  next = s;
  if (op.f == "read" || op.f == "get") return op.status != OpStatus::ok || s == op.value.value_or("");
  if (op.status == OpStatus::fail) return true;  // did not take effect
  if (op.f == "write" || op.f == "put") next = op.arg;
  else if (op.f == "append") next = s + op.arg;
  else return false;
  return true;
}

/// A set of words: its state is the sorted words joined by spaces; a read returns them so.
bool set_step(const ModelState& s, const Op& op, ModelState& next) {
  next = s;
  if (op.f == "read") return op.status != OpStatus::ok || s == op.value.value_or("");
  if (op.f != "add") return false;
  if (op.status == OpStatus::fail) return true;
  std::vector<std::string> words;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t j = std::min(s.find(' ', i), s.size());
    words.push_back(s.substr(i, j - i));
    i = j + 1;
  }
  if (std::find(words.begin(), words.end(), op.arg) == words.end()) words.push_back(op.arg);
  std::sort(words.begin(), words.end());
  next.clear();
  for (const std::string& w : words) next += (next.empty() ? "" : " ") + w;
  return true;
}

/// A FIFO queue: its state is the elements, each followed by '\n'. A dequeue that returned
/// nothing saw it empty.
bool queue_step(const ModelState& s, const Op& op, ModelState& next) {
  next = s;
  if (op.f == "enqueue") {
    if (op.status != OpStatus::fail) next = s + op.arg + "\n";
    return true;
  }
  if (op.f != "dequeue") return false;
  if (op.status == OpStatus::fail) return true;
  if (op.status == OpStatus::info) {  // took the head, or nothing
    if (!s.empty()) next = s.substr(s.find('\n') + 1);
    return true;
  }
  if (!op.value) return s.empty();
  const std::size_t nl = s.find('\n');
  if (nl == std::string::npos || std::string_view(s).substr(0, nl) != *op.value) return false;
  next = s.substr(nl + 1);
  return true;
}

/// A counter: `add N` (N may be negative) and `read`.
bool counter_step(const ModelState& s, const Op& op, ModelState& next) {
  next = s;
  const long long now = s.empty() ? 0 : std::stoll(s);
  if (op.f == "read") return op.status != OpStatus::ok || (op.value && *op.value == std::to_string(now));
  if (op.f != "add") return false;
  if (op.status == OpStatus::fail) return true;
  long long by = 0;
  try {
    by = std::stoll(op.arg);
  } catch (const std::exception&) {
    return false;
  }
  next = std::to_string(now + by);
  return true;
}

/// The built-in models' inert operations: a read that did not complete, and a failed operation
/// other than a cas or a dequeue (whose failure says what the state was not).
bool builtin_inert(const Op& o) {
  const bool reads = o.f == "read" || o.f == "get";
  return (reads && o.status != OpStatus::ok) || (o.status == OpStatus::fail && o.f != "cas" && o.f != "dequeue");
}

const std::vector<Model>& models() {
  static const std::vector<Model> all{
      {"register", [] { return ModelState(); },
       [](const ModelState& s, const Op& op, ModelState& n) { return register_step(s, op, n, false); }, false, builtin_inert, true},
      {"cas-register", [] { return ModelState(); },
       [](const ModelState& s, const Op& op, ModelState& n) { return register_step(s, op, n, true); }, false, builtin_inert, true},
      {"kv", [] { return ModelState(); }, kv_step, true, builtin_inert, true},
      {"set", [] { return ModelState(); }, set_step, false, builtin_inert},
      {"queue", [] { return ModelState(); }, queue_step, false, builtin_inert},
      {"counter", [] { return ModelState(); }, counter_step, false, builtin_inert},
  };
  return all;
}

// ---- the search ----------------------------------------------------------------------------

/// A set of operation indexes, as bits, with a Zobrist hash kept as bits are set and cleared
/// (each index has a fixed pseudo-random key: splitmix64 of the index).
struct Bits {
  std::vector<std::uint64_t> w;
  std::uint64_t hash = 0;
  explicit Bits(std::size_t n) : w((n + 63) / 64, 0) {}
  static std::uint64_t key(std::size_t i) {
    std::uint64_t z = (static_cast<std::uint64_t>(i) + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  void set(std::size_t i) {
    w[i / 64] |= std::uint64_t{1} << (i % 64);
    hash ^= key(i);
  }
  void clear(std::size_t i) {
    w[i / 64] &= ~(std::uint64_t{1} << (i % 64));
    hash ^= key(i);
  }
};

/// Lowe's cache: the (operations linearised, state) pairs met, found by hash in an
/// open-addressing table and then compared in full (a collision never makes a pass a failure).
/// One pool holds every entry's bits.
class Seen {
 public:
  explicit Seen(std::size_t words) : words_(words), slots_(1024, kEmpty) {}
  /// Adds the pair; false when it was there.
  bool add(const Bits& b, std::uint64_t h, const ModelState& state) {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const std::uint32_t k = slots_[i];
      if (k == kEmpty) {
        slots_[i] = static_cast<std::uint32_t>(states_.size());
        break;
      }
      if (hashes_[k] == h && states_[k] == state &&
          std::equal(b.w.begin(), b.w.end(), bits_.begin() + static_cast<std::ptrdiff_t>(k * words_)))
        return false;
    }
    bits_.insert(bits_.end(), b.w.begin(), b.w.end());
    states_.push_back(state);
    hashes_.push_back(h);
    if (2 * states_.size() > slots_.size()) grow();
    return true;
  }

 private:
  static constexpr std::uint32_t kEmpty = 0xffffffffU;
  void grow() {
    std::vector<std::uint32_t> bigger(2 * slots_.size(), kEmpty);
    const std::size_t mask = bigger.size() - 1;
    for (std::uint32_t k = 0; k < hashes_.size(); ++k) {
      std::size_t i = hashes_[k] & mask;
      while (bigger[i] != kEmpty) i = (i + 1) & mask;
      bigger[i] = k;
    }
    slots_ = std::move(bigger);
  }
  std::size_t words_;
  std::vector<std::uint32_t> slots_;  // entry index, or kEmpty
  std::vector<std::uint64_t> hashes_;
  std::vector<std::uint64_t> bits_;
  std::vector<ModelState> states_;
};

std::uint64_t hash_text(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

/// One entry of the history, in time order: an operation's call, or its return. The list is
/// doubly linked so that a linearised call and its return are lifted out and put back in O(1).
struct Node {
  int op = -1;          ///< the operation (index into the partition's ops)
  Node* match = nullptr;  ///< a call's return; null for a return
  Node* prev = nullptr;
  Node* next = nullptr;
};

void lift(Node* call) {
  call->prev->next = call->next;
  call->next->prev = call->prev;
  Node* r = call->match;
  r->prev->next = r->next;
  if (r->next != nullptr) r->next->prev = r->prev;
}

void unlift(Node* call) {
  Node* r = call->match;
  r->prev->next = r;
  if (r->next != nullptr) r->next->prev = r;
  call->prev->next = call;
  call->next->prev = call;
}

struct Partition {
  std::string key;
  std::vector<std::size_t> ops;  ///< indexes into the history
  std::size_t unseen = 0;        ///< unknown writes left out (leave_out_unseen_writes)
};

struct SearchResult {
  Linearizable verdict = Linearizable::yes;
  std::vector<int> longest;  ///< the longest linearisable prefix found (partition op indexes)
  int stuck = -1;            ///< the op whose return the search met after `longest`
};

/// Wing & Gong's search with Lowe's cache over one partition (Porcupine's checkSingle).
SearchResult search(const std::vector<Op>& history, const Partition& p, const Model& model, std::uint64_t& budget,
                    std::size_t& steps) {
  const std::size_t n = p.ops.size();
  struct Entry {
    std::int64_t time;
    bool is_return;
    int op;
  };
  std::vector<Entry> entries;
  entries.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    const Op& o = history[p.ops[i]];
    entries.push_back({o.call, false, static_cast<int>(i)});
    entries.push_back({o.status == OpStatus::info ? std::numeric_limits<std::int64_t>::max() : std::max(o.ret, o.call), true,
                       static_cast<int>(i)});
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.time != b.time ? a.time < b.time : (!a.is_return && b.is_return);
  });
  std::vector<Node> nodes(2 * n + 1);  // nodes[0] is the head
  std::vector<Node*> ret_of(n, nullptr);
  Node* head = &nodes[0];
  Node* last = head;
  for (std::size_t k = 0; k < entries.size(); ++k) {
    Node* x = &nodes[k + 1];
    x->op = entries[k].op;
    x->prev = last;
    last->next = x;
    last = x;
    if (entries[k].is_return) ret_of[static_cast<std::size_t>(x->op)] = x;
  }
  for (std::size_t k = 1; k < nodes.size(); ++k)
    if (&nodes[k] != ret_of[static_cast<std::size_t>(nodes[k].op)]) nodes[k].match = ret_of[static_cast<std::size_t>(nodes[k].op)];

  Bits linearized(n);
  Seen cache(linearized.w.size());
  struct Call {
    Node* entry;
    ModelState state;
  };
  std::vector<Call> calls;
  SearchResult r;
  ModelState state = model.init();
  Node* entry = head->next;
  while (head->next != nullptr) {
    if (budget == 0) {
      r.verdict = Linearizable::unknown;
      return r;
    }
    --budget;
    ++steps;
    if (entry->match != nullptr) {  // a call: try to linearise it here
      const Op& o = history[p.ops[static_cast<std::size_t>(entry->op)]];
      ModelState next;
      if (model.step(state, o, next)) {
        linearized.set(static_cast<std::size_t>(entry->op));
        if (cache.add(linearized, linearized.hash ^ hash_text(next), next)) {
          calls.push_back({entry, std::move(state)});
          state = std::move(next);
          lift(entry);
          entry = head->next;
          continue;
        }
        linearized.clear(static_cast<std::size_t>(entry->op));
      }
      entry = entry->next;
      continue;
    }
    // A return: its operation was not linearised in time. Note the longest prefix, then back up.
    if (calls.size() >= r.longest.size()) {
      r.longest.clear();
      for (const Call& c : calls) r.longest.push_back(c.entry->op);
      r.stuck = entry->op;
    }
    if (calls.empty()) {
      r.verdict = Linearizable::no;
      return r;
    }
    entry = calls.back().entry;
    state = std::move(calls.back().state);
    calls.pop_back();
    linearized.clear(static_cast<std::size_t>(entry->op));
    unlift(entry);
    entry = entry->next;
  }
  r.longest.clear();
  for (const Call& c : calls) r.longest.push_back(c.entry->op);
  return r;
}

/// Model::blind_writes: an unknown write of a value that no other operation of the partition
/// mentions can take effect last, where nothing sees it; it is left out (counted apart). An empty
/// value stays (a read of nothing mentions it in its way).
void leave_out_unseen_writes(const std::vector<Op>& history, Partition& p) {
  const auto unknown_write = [&](std::size_t i) { return history[i].status == OpStatus::info && history[i].f == "write"; };
  std::set<std::string_view> seen;
  for (const std::size_t i : p.ops) {
    const Op& o = history[i];
    if (o.value) seen.insert(*o.value);
    if (unknown_write(i)) continue;
    seen.insert(o.arg);
    seen.insert(o.arg2);
  }
  std::vector<std::size_t> kept;
  for (const std::size_t i : p.ops) {
    if (unknown_write(i) && !history[i].arg.empty() && !seen.contains(history[i].arg)) ++p.unseen;
    else kept.push_back(i);
  }
  p.ops = std::move(kept);
}

std::vector<Partition> partitions(const std::vector<Op>& history, const Model& model) {
  std::map<std::string, Partition> by;
  for (std::size_t i = 0; i < history.size(); ++i) {
    if (model.inert && model.inert(history[i])) continue;
    const std::string key = model.by_key ? history[i].key : std::string();
    by[key].key = key;
    by[key].ops.push_back(i);
  }
  std::vector<Partition> out;
  for (auto& [k, p] : by) {
    if (model.blind_writes) leave_out_unseen_writes(history, p);
    out.push_back(std::move(p));
  }
  return out;
}

NonLinearizable witness(const std::vector<Op>& history, const Partition& p, const SearchResult& s) {
  NonLinearizable w;
  w.key = p.key;
  std::vector<bool> in_prefix(p.ops.size(), false);
  for (int i : s.longest) {
    w.prefix.push_back(p.ops[static_cast<std::size_t>(i)]);
    in_prefix[static_cast<std::size_t>(i)] = true;
  }
  const std::size_t stuck = s.stuck >= 0 ? static_cast<std::size_t>(s.stuck) : 0;
  w.stuck = p.ops[stuck];
  const Op& st = history[w.stuck];
  for (std::size_t i = 0; i < p.ops.size(); ++i)
    if (!in_prefix[i] && history[p.ops[i]].call <= st.ret) w.window.push_back(p.ops[i]);
  return w;
}

}  // namespace

const Model* find_model(const std::string& name) {
  for (const Model& m : models())
    if (m.name == name) return &m;
  return nullptr;
}

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Model& m : models()) v.push_back(m.name);
    return v;
  }();
  return names;
}

LinearizabilityResult check_linearizable(const std::vector<Op>& history, const Model& model, const LinearizabilityOptions& o) {
  LinearizabilityResult r;
  const std::vector<Partition> parts = partitions(history, model);
  r.partitions = parts.size();
  for (const Partition& p : parts) {
    r.operations += p.ops.size();
    r.unseen_writes += p.unseen;
  }
  // One refuted partition refutes the history, and a hard partition can take far longer to settle
  // than an easy one takes to refute. So every unsettled partition gets a slice of steps in turn,
  // the slice growing fourfold a round (a partition's search starts again each round: at most a
  // third more work than knowing its cost beforehand), in key order: deterministic.
  std::vector<std::size_t> open(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) open[i] = i;
  std::uint64_t budget = o.max_steps;
  std::size_t hardest = 0;
  for (std::uint64_t slice = 10'000; !open.empty(); slice *= 4) {
    std::vector<std::size_t> still;
    for (const std::size_t i : open) {
      std::uint64_t mine = open.size() == 1 ? budget : std::min(slice, budget);  // alone: no need to take turns
      const std::uint64_t before = mine;
      const SearchResult s = search(history, parts[i], model, mine, r.steps);
      budget -= before - mine;
      if (s.verdict == Linearizable::no) {
        r.verdict = Linearizable::no;
        r.witness = witness(history, parts[i], s);
        return r;
      }
      if (s.verdict == Linearizable::unknown) {
        still.push_back(i);
        if (parts[i].ops.size() > parts[hardest].ops.size() || still.size() == 1) hardest = i;
      }
    }
    open = std::move(still);
    if (!open.empty() && budget == 0) {
      const Partition& p = parts[hardest];
      r.verdict = Linearizable::unknown;
      r.unknown_why = "the search ran out of its budget of " + std::to_string(o.max_steps) + " steps with " +
                      std::to_string(open.size()) + " of " + std::to_string(parts.size()) + " partitions unsettled (" +
                      (p.key.empty() ? std::string("the history") : "key '" + p.key + "'") + ", " + std::to_string(p.ops.size()) +
                      " operations, among them)";
      return r;
    }
  }
  return r;
}

std::string describe(const Op& op) {
  std::string args = op.arg;
  if (!op.arg2.empty()) args += ", " + op.arg2;
  std::string out = op.f + "(" + (op.key.empty() ? "" : op.key + (args.empty() ? "" : ", ")) + args + ")";
  switch (op.status) {
    case OpStatus::ok: return out + (op.value ? " -> " + *op.value : op.f == "read" || op.f == "get" ? " -> nil" : "");
    case OpStatus::fail: return out + " -> fail";
    case OpStatus::info: return out + " -> ?";
  }
  return out;
}

}  // namespace lic::properties
