#include "scenarios/scenario.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <numeric>

namespace lic::scenarios {

bool ServiceDecl::operator==(const ServiceDecl&) const = default;
// Written out rather than defaulted: clang 14 crashes defaulting == on a type that holds a
// vector of itself (it recurses evaluating the implicit exception specification).
bool TreeNode::operator==(const TreeNode& o) const {
  if (kind != o.kind || !(spec == o.spec) || !(behaviour == o.behaviour) ||
      !(flags == o.flags) || init != o.init || services != o.services || children.size() != o.children.size()) {
    return false;
  }
  return std::equal(children.begin(), children.end(), o.children.begin(),
                    [](const TreeNode& a, const TreeNode& b) { return a == b; });
}

bool CheckDecl::operator==(const CheckDecl& o) const {
  if (name != o.name || args.size() != o.args.size()) return false;
  for (const auto& [k, v] : args) {
    const ArgValue* w = o.arg(k);
    if (w == nullptr || !(*w == v)) return false;
  }
  return true;
}

const ArgValue* CheckDecl::arg(std::string_view key) const {
  for (const auto& [k, v] : args) {
    if (k == key) return &v;
  }
  return nullptr;
}

CheckDecl& CheckDecl::with(std::string key, std::string text) {
  ArgValue v;
  v.scalar = std::move(text);
  for (auto& [k, old] : args) {
    if (k == key) {
      v.mark = old.mark;
      old = std::move(v);
      return *this;
    }
  }
  args.emplace_back(std::move(key), std::move(v));
  return *this;
}

bool Scenario::operator==(const Scenario& o) const {
  // Everything but `file` (where it was read from is not what it is).
  return name == o.name && description == o.description && seed == o.seed &&
         tie_break == o.tie_break && duration == o.duration && nodes == o.nodes &&
         default_link == o.default_link && links == o.links && trees == o.trees &&
         script == o.script && faults == o.faults && quiet == o.quiet &&
         expect_escalation == o.expect_escalation && expect_fail == o.expect_fail && checks == o.checks && reports == o.reports &&
         buggify == o.buggify && fix == o.fix && streams == o.streams;
}

std::string Scenario::default_node() const { return nodes.empty() ? "node0" : nodes.front().name; }

namespace {
constexpr std::array<std::string_view, 11> kOps = {"crash",         "kill",         "exit",           "stop",
                                                   "start_child",   "terminate_child", "restart_child", "delete_child",
                                                   "which_children", "stop_task",     "count_children"};
}  // namespace

std::string_view to_string(Step::Op op) { return kOps[static_cast<std::size_t>(op)]; }

bool parse_step_op(std::string_view text, Step::Op& out) {
  for (std::size_t i = 0; i < kOps.size(); ++i) {
    if (kOps[i] == text) {
      out = static_cast<Step::Op>(i);
      return true;
    }
  }
  return false;
}

Ratio reduce(Ratio r) {
  if (r.num == 0) return Ratio{0, 1};
  const std::uint64_t g = std::gcd(r.num, r.den);
  return Ratio{r.num / g, r.den / g};
}

namespace {

/// An unsigned decimal `123` or `1.25` as an exact fraction; false on anything else.
bool parse_decimal(std::string_view t, std::uint64_t& num, std::uint64_t& den) {
  if (t.empty()) return false;
  num = 0;
  den = 1;
  bool digits = false;
  bool point = false;
  for (char c : t) {
    if (c == '.') {
      if (point) return false;
      point = true;
      continue;
    }
    if (c < '0' || c > '9') return false;
    digits = true;
    if (num > (UINT64_MAX - 9) / 10 || (point && den > UINT64_MAX / 10)) return false;
    num = num * 10 + static_cast<std::uint64_t>(c - '0');
    if (point) den *= 10;
  }
  return digits;
}

}  // namespace

bool parse_ratio(std::string_view text, Ratio& out, std::string& error) {
  std::uint64_t num = 0;
  std::uint64_t den = 1;
  if (const auto slash = text.find('/'); slash != std::string_view::npos) {
    const std::string_view a = text.substr(0, slash);
    const std::string_view b = text.substr(slash + 1);
    const auto ra = std::from_chars(a.data(), a.data() + a.size(), num);
    const auto rb = std::from_chars(b.data(), b.data() + b.size(), den);
    if (a.empty() || b.empty() || ra.ec != std::errc() || ra.ptr != a.data() + a.size() ||
        rb.ec != std::errc() || rb.ptr != b.data() + b.size()) {
      error = "bad ratio '" + std::string(text) + "' (write 2%, 0.02 or 1/50)";
      return false;
    }
    if (den == 0) {
      error = "bad ratio '" + std::string(text) + "': division by zero";
      return false;
    }
  } else {
    const bool percent = !text.empty() && text.back() == '%';
    const std::string_view body = percent ? text.substr(0, text.size() - 1) : text;
    if (!parse_decimal(body, num, den) || (percent && den > UINT64_MAX / 100)) {
      error = "bad ratio '" + std::string(text) + "' (write 2%, 0.02 or 1/50)";
      return false;
    }
    if (percent) den *= 100;
  }
  if (num > den) {
    error = "ratio '" + std::string(text) + "' is more than 100%";
    return false;
  }
  out = reduce(Ratio{num, den});
  return true;
}

std::string format_ratio(Ratio r) {
  r = reduce(r);
  if (r.num == 0) return "0";
  if (r.num == r.den) return "1";
  // A denominator of the form 2^a 5^b has an exact decimal: print it as a percentage.
  std::uint64_t d = r.den;
  unsigned twos = 0;
  unsigned fives = 0;
  while (d % 2 == 0) d /= 2, ++twos;
  while (d % 5 == 0) d /= 5, ++fives;
  const unsigned digits = std::max(twos, fives);
  if (d == 1 && digits <= 17) {
    // num/den = num * scale / 10^digits with scale = 10^digits / den.
    std::uint64_t pow10 = 1;
    for (unsigned i = 0; i < digits; ++i) pow10 *= 10;
    const std::uint64_t scale = pow10 / r.den;
    if (r.num <= UINT64_MAX / scale) {
      std::string s = std::to_string(r.num * scale);
      // As a percentage: move the point two places right.
      const int point = static_cast<int>(digits) - 2;  // digits after the point in percent
      if (point <= 0) {
        s += std::string(static_cast<std::size_t>(-point), '0');
        return s + "%";
      }
      if (s.size() <= static_cast<std::size_t>(point)) s.insert(0, static_cast<std::size_t>(point) - s.size() + 1, '0');
      s.insert(s.size() - static_cast<std::size_t>(point), ".");
      return s + "%";
    }
  }
  return std::to_string(r.num) + "/" + std::to_string(r.den);
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

std::size_t edit_distance(std::string_view a, std::string_view b, std::size_t limit) {
  // Only cells within `limit` of the diagonal can hold a distance up to `limit` (Ukkonen): the
  // rest count as limit + 1, and so does any row whose every cell is past it.
  const std::size_t over = limit + 1;
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > limit) return over;
  std::vector<std::size_t> row(b.size() + 1, over);
  for (std::size_t j = 0; j <= std::min(b.size(), limit); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    const std::size_t from = i > limit ? i - limit : 1;
    const std::size_t to = std::min(b.size(), i + limit);
    std::size_t diagonal = row[from - 1];
    row[from - 1] = from == 1 && i <= limit ? i : over;
    std::size_t least = row[from - 1];
    for (std::size_t j = from; j <= to; ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({std::min(up, over) + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1), over});
      least = std::min(least, row[j]);
      diagonal = up;
    }
    if (to < b.size()) row[to + 1] = over;
    if (least >= over) return over;
  }
  return std::min(row[b.size()], over);
}

/// The closest of `names` to `wrong` (a typo of at most a third of its letters, at least 2 and
/// at most 8), or one that ends in "." + wrong (`reader` for pipeline.reader); "" when none is
/// close. The bound keeps it cheap on long names: a tree 246 levels deep has paths of 1,000
/// letters, and the shrinker validates thousands of candidates whose paths are gone.
std::string closest_name(std::string_view wrong, const std::vector<std::string>& names) {
  std::string best;
  std::size_t best_distance = std::clamp<std::size_t>(wrong.size() / 3, 2, 8) + 1;
  for (const std::string& n : names) {
    const std::size_t d = edit_distance(wrong, n, best_distance - 1);
    if (d < best_distance) best = n, best_distance = d;
  }
  if (!best.empty()) return best;
  for (const std::string& n : names) {
    if (n.size() > wrong.size() && n.ends_with(wrong) && n[n.size() - wrong.size() - 1] == '.') return n;
  }
  return "";
}

bool parse_factor(const std::string& text, Ratio& out) {
  // A positive multiplier: 2, 1.5, 3/2 (parse_ratio reads fractions up to 1; scale by 1000).
  std::uint64_t num = 0;
  std::uint64_t den = 1;
  if (const auto slash = text.find('/'); slash != std::string::npos) {
    const auto a = std::from_chars(text.data(), text.data() + slash, num);
    const auto b = std::from_chars(text.data() + slash + 1, text.data() + text.size(), den);
    if (a.ec != std::errc() || a.ptr != text.data() + slash || b.ec != std::errc() ||
        b.ptr != text.data() + text.size() || den == 0 || num == 0)
      return false;
  } else {
    bool point = false;
    bool digits = false;
    for (char c : text) {
      if (c == '.' && !point) {
        point = true;
        continue;
      }
      if (c < '0' || c > '9' || num > 1'000'000'000'000ULL) return false;
      digits = true;
      num = num * 10 + static_cast<std::uint64_t>(c - '0');
      if (point) den *= 10;
    }
    if (!digits || num == 0) return false;
  }
  out = reduce(Ratio{num, den});
  return true;
}

std::string format_factor(Ratio r) {
  r = reduce(r);
  return r.den == 1 ? std::to_string(r.num) : std::to_string(r.num) + "/" + std::to_string(r.den);
}


}  // namespace lic::scenarios
