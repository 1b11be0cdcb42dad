// The linearizability checker (properties/linearizability.hpp) against Porcupine's verdicts on
// Porcupine's own test histories: 102 Jepsen etcd logs (a cas-register) and 6 key-value logs
// (issue 38). verdicts.txt holds what porcupine_test.go asserts for each file.

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "properties/jepsen.hpp"
#include "properties/linearizability.hpp"

using namespace lic;

namespace {

struct Case {
  std::string file;
  bool linearizable = false;
};

std::vector<Case> cases() {
  std::ifstream in(std::string(PORCUPINE_DIR) + "/verdicts.txt");
  std::vector<Case> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream w(line);
    Case c;
    std::string v;
    w >> c.file >> v;
    c.linearizable = v == "true";
    out.push_back(c);
  }
  return out;
}

}  // namespace

TEST_CASE("porcupine: the checker agrees with Porcupine on every one of its test histories (Jepsen etcd, key-value)", "[porcupine]") {
  const std::vector<Case> all = cases();
  REQUIRE(all.size() == 108);
  std::size_t agree = 0, linearizable = 0;
  for (const Case& c : all) {
    INFO(c.file);
    std::string error;
    const std::string path = std::string(PORCUPINE_DIR) + "/" + c.file;
    const bool etcd = c.file.rfind("jepsen/", 0) == 0;
    const std::vector<properties::Op> h = etcd ? properties::read_jepsen_etcd(path, error) : properties::read_jepsen_kv(path, error);
    REQUIRE(error.empty());
    REQUIRE(!h.empty());
    const properties::Model& model = *properties::find_model(etcd ? "cas-register" : "kv");
    const properties::LinearizabilityResult r = properties::check_linearizable(h, model);
    CHECK(r.verdict != properties::Linearizable::unknown);
    const bool ok = r.verdict == properties::Linearizable::yes;
    CHECK(ok == c.linearizable);
    agree += ok == c.linearizable ? 1 : 0;
    linearizable += c.linearizable ? 1 : 0;
    if (!ok) {  // a refutation names where: the stuck operation is in the window, after the prefix
      REQUIRE(r.witness);
      CHECK(std::find(r.witness->window.begin(), r.witness->window.end(), r.witness->stuck) != r.witness->window.end());
    }
  }
  CHECK(agree == all.size());
  CHECK(linearizable > 10);  // both verdicts are exercised
  CHECK(all.size() - linearizable > 10);
}

TEST_CASE("porcupine: a history the budget cannot settle is unknown, never linearizable", "[porcupine]") {
  std::string error;
  const auto h = properties::read_jepsen_etcd(std::string(PORCUPINE_DIR) + "/jepsen/etcd_002.log", error);
  REQUIRE(error.empty());
  properties::LinearizabilityOptions o;
  o.max_steps = 10;
  const auto r = properties::check_linearizable(h, *properties::find_model("cas-register"), o);
  CHECK(r.verdict == properties::Linearizable::unknown);
  CHECK(r.unknown_why.find("budget of 10 steps") != std::string::npos);
}
