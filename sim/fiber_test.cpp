#include "sim/fiber.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using namespace lic;

namespace {
struct PingPong {
  FiberSystem* sys = nullptr;
  FiberSystem::Fiber* a = nullptr;
  FiberSystem::Fiber* b = nullptr;
  std::vector<std::string> log;
};

FiberSystem::Fiber* run_a(void* arg) {
  auto* s = static_cast<PingPong*>(arg);
  for (int i = 0; i < 3; ++i) {
    s->log.push_back("a" + std::to_string(i));
    s->sys->switch_to(s->b);
  }
  return s->sys->main();
}

FiberSystem::Fiber* run_b(void* arg) {
  auto* s = static_cast<PingPong*>(arg);
  for (int i = 0;; ++i) {
    s->log.push_back("b" + std::to_string(i));
    s->sys->switch_to(s->a);
    if (i == 2) break;
  }
  return s->sys->main();
}
}  // namespace

TEST_CASE("both fiber backends switch exactly where asked and end back in main", "[fiber]") {
  for (FiberBackend backend : {FiberBackend::context, FiberBackend::boost_fiber}) {
    INFO("backend " << to_string(backend));
    FiberSystem sys(backend);
    PingPong s;
    s.sys = &sys;
    s.a = sys.create(64 * 1024, &run_a, &s);
    s.b = sys.create(64 * 1024, &run_b, &s);
    CHECK(sys.live() == 2);
    sys.switch_to(s.a);  // a0 b0 a1 b1 a2 b2, then a ends back in main
    CHECK(s.log == std::vector<std::string>{"a0", "b0", "a1", "b1", "a2", "b2"});
    CHECK(sys.current() == sys.main());
    CHECK(sys.live() == 1);
    sys.switch_to(s.b);  // b leaves its loop and ends
    CHECK(sys.live() == 0);
  }
}

TEST_CASE("backend names parse and print", "[fiber]") {
  FiberBackend b{};
  CHECK(parse_fiber_backend("boost_fiber", b));
  CHECK(b == FiberBackend::boost_fiber);
  CHECK(to_string(b) == "boost_fiber");
  CHECK_FALSE(parse_fiber_backend("threads", b));
}
