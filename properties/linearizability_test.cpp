// The linearizability checker (properties/linearizability.hpp) on small histories whose verdict
// is known by hand, one or two per model; Porcupine's own histories are in conformance/porcupine.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "properties/linearizability.hpp"

using namespace lic::properties;

namespace {

Op op(std::int64_t client, std::int64_t call, std::int64_t ret, std::string f, std::string arg = {},
      std::optional<std::string> value = std::nullopt, OpStatus status = OpStatus::ok, std::string key = {}) {
  Op o;
  o.client = client;
  o.call = call;
  o.ret = ret;
  o.f = std::move(f);
  o.arg = std::move(arg);
  o.value = std::move(value);
  o.status = status;
  o.key = std::move(key);
  return o;
}

Linearizable verdict(const std::vector<Op>& h, const char* model) { return check_linearizable(h, *find_model(model)).verdict; }

}  // namespace

TEST_CASE("linearizable: a register - concurrent writes may land in either order, a stale read after both is not", "[linearizability]") {
  // write 1 and write 2 overlap; a read after both returns 2: write 1 then write 2.
  std::vector<Op> h{op(1, 0, 10, "write", "1"), op(2, 5, 15, "write", "2"), op(3, 20, 25, "read", {}, "2")};
  CHECK(verdict(h, "register") == Linearizable::yes);
  h[2].value = "1";  // or 1: write 2 then write 1
  CHECK(verdict(h, "register") == Linearizable::yes);
  // A read that returns 1 after a later read returned 2, with no write between: not linearizable.
  h.push_back(op(3, 30, 35, "read", {}, "1"));
  h[2].value = "2";
  const LinearizabilityResult r = check_linearizable(h, *find_model("register"));
  REQUIRE(r.verdict == Linearizable::no);
  REQUIRE(r.witness);
  CHECK(r.witness->stuck == 3);  // the stale read cannot follow the longest prefix
  CHECK(r.witness->prefix.size() == 3);
  CHECK(describe(h[r.witness->stuck]) == "read() -> 1");
}

TEST_CASE("linearizable: a read of nothing before any write, and real time orders what does not overlap", "[linearizability]") {
  CHECK(verdict({op(1, 0, 1, "read"), op(1, 2, 3, "write", "7"), op(2, 4, 5, "read", {}, "7")}, "register") == Linearizable::yes);
  // The write completed before the read began: a read of nothing is stale.
  CHECK(verdict({op(1, 0, 1, "write", "7"), op(2, 2, 3, "read")}, "register") == Linearizable::no);
}

TEST_CASE("linearizable: an info write may or may not take effect - up to the end of the history", "[linearizability]") {
  // A write that timed out (info); a later read sees it, or does not: both are linearizable.
  std::vector<Op> h{op(1, 0, 0, "write", "5", {}, OpStatus::info), op(2, 100, 101, "read", {}, "5")};
  CHECK(verdict(h, "register") == Linearizable::yes);
  h[1].value.reset();
  CHECK(verdict(h, "register") == Linearizable::yes);
  // A failed write did not take effect: reading its value is not linearizable.
  h[0].status = OpStatus::fail;
  h[0].ret = 1;
  h[1].value = "5";
  CHECK(verdict(h, "register") == Linearizable::no);
}

TEST_CASE("linearizable: a cas-register - a cas that failed saw another value", "[linearizability]") {
  Op cas = op(1, 10, 11, "cas", "1");
  cas.arg2 = "2";
  std::vector<Op> h{op(1, 0, 1, "write", "1"), cas, op(2, 20, 21, "read", {}, "2")};
  CHECK(verdict(h, "cas-register") == Linearizable::yes);
  h[1].status = OpStatus::fail;  // its compare failed, yet the register held 1 and nothing else wrote
  h[2].value = "1";
  CHECK(verdict(h, "cas-register") == Linearizable::no);
}

TEST_CASE("linearizable: a key-value map is checked key by key - one bad key is enough", "[linearizability]") {
  std::vector<Op> h{op(1, 0, 1, "append", "x", {}, OpStatus::ok, "a"), op(2, 0, 1, "append", "y", {}, OpStatus::ok, "b"),
                    op(1, 2, 3, "append", "z", {}, OpStatus::ok, "a"), op(2, 4, 5, "get", {}, "xz", OpStatus::ok, "a"),
                    op(2, 6, 7, "get", {}, "y", OpStatus::ok, "b")};
  LinearizabilityResult r = check_linearizable(h, *find_model("kv"));
  CHECK(r.verdict == Linearizable::yes);
  CHECK(r.partitions == 2);
  h[3].value = "zx";  // appends out of their real-time order
  r = check_linearizable(h, *find_model("kv"));
  REQUIRE(r.verdict == Linearizable::no);
  CHECK(r.witness->key == "a");
}

TEST_CASE("linearizable: a set, a FIFO queue and a counter", "[linearizability]") {
  CHECK(verdict({op(1, 0, 1, "add", "b"), op(2, 0, 1, "add", "a"), op(3, 2, 3, "read", {}, "a b")}, "set") == Linearizable::yes);
  CHECK(verdict({op(1, 0, 1, "add", "b"), op(3, 2, 3, "read", {}, "a b")}, "set") == Linearizable::no);
  CHECK(verdict({op(1, 0, 1, "enqueue", "1"), op(1, 2, 3, "enqueue", "2"), op(2, 4, 5, "dequeue", {}, "1"),
                 op(2, 6, 7, "dequeue", {}, "2"), op(2, 8, 9, "dequeue")},
                "queue") == Linearizable::yes);
  CHECK(verdict({op(1, 0, 1, "enqueue", "1"), op(1, 2, 3, "enqueue", "2"), op(2, 4, 5, "dequeue", {}, "2")}, "queue") ==
        Linearizable::no);
  CHECK(verdict({op(1, 0, 10, "add", "3"), op(2, 0, 10, "add", "-1"), op(3, 5, 6, "read", {}, "3"), op(3, 11, 12, "read", {}, "2")},
                "counter") == Linearizable::yes);
  CHECK(verdict({op(1, 0, 1, "add", "3"), op(3, 5, 6, "read", {}, "4")}, "counter") == Linearizable::no);
}

TEST_CASE("linearizable: the same history gives the same verdict, prefix and window", "[linearizability]") {
  std::vector<Op> h;
  for (int i = 0; i < 40; ++i) h.push_back(op(i % 5, i * 3, i * 3 + 7, i % 3 == 0 ? "read" : "write", std::to_string(i % 4),
                                           i % 3 == 0 ? std::optional<std::string>(std::to_string((i / 3) % 4)) : std::nullopt));
  const LinearizabilityResult a = check_linearizable(h, *find_model("register"));
  const LinearizabilityResult b = check_linearizable(h, *find_model("register"));
  CHECK(a.verdict == b.verdict);
  CHECK(a.steps == b.steps);
  REQUIRE(a.witness.has_value() == b.witness.has_value());
  if (a.witness) {
    CHECK(a.witness->prefix == b.witness->prefix);
    CHECK(a.witness->window == b.witness->window);
  }
  CHECK(find_model("no such model") == nullptr);
  CHECK(model_names().size() == 6);
}

TEST_CASE("linearizable: a model of one's own - a bank account that never goes below zero", "[linearizability]") {
  // The state is the balance as text; `deposit N` always works, `withdraw N` works (ok) when the
  // balance covers it and is refused (fail) when it does not, `balance` reads it.
  const Model account{"account", [] { return ModelState("0"); },
                      [](const ModelState& s, const Op& op, ModelState& next) {
                        const long long have = std::stoll(s);
                        const long long n = op.arg.empty() ? 0 : std::stoll(op.arg);
                        next = s;
                        if (op.f == "deposit") {
                          if (op.status != OpStatus::fail) next = std::to_string(have + n);
                          return true;
                        }
                        if (op.f == "withdraw") {
                          if (op.status == OpStatus::fail) return have < n;  // refused: it did not cover it
                          if (have < n) return op.status == OpStatus::info;  // unknown: it did not happen
                          next = std::to_string(have - n);
                          return true;
                        }
                        return op.f == "balance" && (op.status != OpStatus::ok || op.value == s);
                      }};
  // Two withdrawals of 70 from 100 at once: one succeeds and one is refused. Both succeeding is
  // a double spend.
  std::vector<Op> h{op(1, 0, 1, "deposit", "100"), op(2, 2, 5, "withdraw", "70"), op(3, 2, 5, "withdraw", "70", {}, OpStatus::fail),
                    op(1, 6, 7, "balance", {}, "30")};
  CHECK(check_linearizable(h, account).verdict == Linearizable::yes);
  h[2].status = OpStatus::ok;
  const LinearizabilityResult r = check_linearizable(h, account);
  CHECK(r.verdict == Linearizable::no);
  REQUIRE(r.witness);
  CHECK(describe(h[r.witness->stuck]).find("withdraw(70)") == 0);
  // A refusal says something too: refusing 70 when the balance held 100 is not what the account
  // does (a model of one's own keeps its failed operations in the search).
  const std::vector<Op> refused{op(1, 0, 1, "deposit", "100"), op(2, 2, 3, "withdraw", "70", {}, OpStatus::fail)};
  CHECK(check_linearizable(refused, account).verdict == Linearizable::no);
}

TEST_CASE("linearizable: unknown writes nothing saw are left out - decided at once where the full search runs out", "[linearizability]") {
  // A client whose 40 writes all timed out (a store cut off), each still open to the end, then
  // writes and reads of its own: every unknown write could land anywhere after its invocation.
  std::vector<Op> h;
  for (int i = 0; i < 40; ++i) h.push_back(op(1 + i % 4, i * 10, 0, "write", "lost" + std::to_string(i), {}, OpStatus::info));
  for (int i = 0; i < 20; ++i) {
    h.push_back(op(9, 1000 + i * 10, 1001 + i * 10, "write", std::to_string(i)));
    h.push_back(op(9, 1002 + i * 10, 1003 + i * 10, "read", {}, std::to_string(i)));
  }
  const LinearizabilityResult r = check_linearizable(h, *find_model("register"));
  CHECK(r.verdict == Linearizable::yes);
  CHECK(r.unseen_writes == 40);
  CHECK(r.operations == 40);
  // A stale read among them is still found: an unknown write cannot excuse it. Refuting it with
  // every unknown write searched means trying each subset of them: out of any budget.
  h.back().value = "3";
  CHECK(check_linearizable(h, *find_model("register")).verdict == Linearizable::no);
  Model full = *find_model("register");
  full.blind_writes = false;
  LinearizabilityOptions small;
  small.max_steps = 1'000'000;
  CHECK(check_linearizable(h, full, small).verdict == Linearizable::unknown);
}

TEST_CASE("linearizable: an unknown write some operation saw is kept - by a read's value or a cas's argument", "[linearizability]") {
  // The read of 5 is explained only by the timed-out write of 5: leaving it out would refute it.
  std::vector<Op> h{op(1, 0, 0, "write", "5", {}, OpStatus::info), op(2, 100, 101, "read", {}, "5")};
  LinearizabilityResult r = check_linearizable(h, *find_model("register"));
  CHECK(r.verdict == Linearizable::yes);
  CHECK(r.unseen_writes == 0);
  // A cas from 5 to 6 that succeeded, then a read of 6: the unknown write is what it compared.
  Op cas = op(3, 50, 60, "cas", "5");
  cas.arg2 = "6";
  h[1].value = "6";
  h.insert(h.begin() + 1, cas);
  r = check_linearizable(h, *find_model("cas-register"));
  CHECK(r.verdict == Linearizable::yes);
  CHECK(r.unseen_writes == 0);
}
