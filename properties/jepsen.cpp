#include "properties/jepsen.hpp"

#include <fstream>
#include <map>
#include <regex>

namespace lic::properties {

namespace {


/// The open operation of each process, by process; completes or is left info at the end.
struct Open {
  std::vector<Op> ops;
  std::map<std::int64_t, std::size_t> by_process;

  void invoke(std::int64_t proc, std::int64_t t, Op op) {
    op.client = proc;
    op.call = t;
    op.status = OpStatus::info;  // until it completes
    by_process[proc] = ops.size();
    ops.push_back(std::move(op));
  }
  /// The process's open operation, completed at `t`; null when it has none.
  Op* complete(std::int64_t proc, std::int64_t t, OpStatus status) {
    const auto it = by_process.find(proc);
    if (it == by_process.end()) return nullptr;
    Op& op = ops[it->second];
    by_process.erase(it);
    op.ret = t;
    op.status = status;
    return &op;
  }
};

/// Calls `line(n, text)` for each line of `path`; false (with `error`) when it cannot be read or
/// a line says so (by returning false).
template <class F>
bool each_line(const std::string& path, std::string& error, F line) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot be read";
    return false;
  }
  std::string text;
  for (std::int64_t n = 1; std::getline(in, text); ++n)
    if (!line(n, text)) return false;
  return true;
}

}  // namespace

std::vector<Op> read_jepsen_etcd(const std::string& path, std::string& error) {
  static const std::regex line_re(R"(^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:(invoke|ok|fail|info)\s+:(read|write|cas)\s+(.*)$)");
  static const std::regex pair_re(R"(^\[(\d+)\s+(\d+)\]$)");
  Open open;
  const bool read = each_line(path, error, [&](std::int64_t n, const std::string& line) {
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) return true;  // the log's other lines: not operations
    const std::int64_t proc = std::stoll(m[1].str());
    const std::string type = m[2].str(), f = m[3].str(), v = m[4].str();
    std::smatch pair;
    const bool is_pair = std::regex_match(v, pair, pair_re);
    if (type == "invoke") {
      Op op;
      op.f = f;
      if (f == "write") op.arg = v;
      if (f == "cas" && is_pair) op.arg = pair[1].str(), op.arg2 = pair[2].str();
      open.invoke(proc, n, std::move(op));
    } else if (type == "info") {
      open.by_process.erase(proc);  // unknown: it may take effect up to the end (stays info)
    } else if (f == "read" && type == "fail") {
      if (Op* op = open.complete(proc, n, OpStatus::info)) op->ret = n;  // timed out: constrains nothing
    } else if (Op* op = open.complete(proc, n, type == "ok" ? OpStatus::ok : OpStatus::fail)) {
      if (f == "read" && v != "nil") op->value = v;
    } else {
      error = path + ":" + std::to_string(n) + ": a completion with no invocation open for process " + m[1].str();
      return false;
    }
    return true;
  });
  return read ? std::move(open.ops) : std::vector<Op>{};
}

std::vector<Op> read_jepsen_kv(const std::string& path, std::string& error) {
  static const std::regex line_re(
      R"re(^\{:process (\d+), :type :(invoke|ok|fail|info), :f :(get|put|append), :key "([^"]*)", :value (nil|"([^"]*)")\}$)re");
  Open open;
  const bool read = each_line(path, error, [&](std::int64_t n, const std::string& line) {
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) {
      if (line.empty()) return true;
      error = path + ":" + std::to_string(n) + ": not a key-value operation";
      return false;
    }
    const std::int64_t proc = std::stoll(m[1].str());
    const std::string type = m[2].str(), f = m[3].str();
    if (type == "invoke") {
      Op op;
      op.f = f;
      op.key = m[4].str();
      if (f != "get") op.arg = m[6].str();
      open.invoke(proc, n, std::move(op));
    } else if (type == "info") {
      open.by_process.erase(proc);
    } else if (Op* op = open.complete(proc, n, type == "ok" ? OpStatus::ok : OpStatus::fail)) {
      if (f == "get") op->value = m[6].str();
    } else {
      error = path + ":" + std::to_string(n) + ": a completion with no invocation open for process " + m[1].str();
      return false;
    }
    return true;
  });
  return read ? std::move(open.ops) : std::vector<Op>{};
}

}  // namespace lic::properties
