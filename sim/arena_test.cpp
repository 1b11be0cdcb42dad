#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

#include "sim/arena.hpp"

using lic::RecordArena;

namespace {
bool aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }
}  // namespace

TEST_CASE("arena: every record is aligned as asked - across chunks and after reuse", "[arena]") {
  // 72-byte records aligned to 64 take 128 bytes each; 40,000 of them span three 2 MiB chunks.
  RecordArena arena(72, 64);
  std::vector<void*> got;
  for (int i = 0; i < 40'000; ++i) got.push_back(arena.allocate());
  std::set<void*> distinct(got.begin(), got.end());
  CHECK(distinct.size() == got.size());
  for (void* p : got) REQUIRE(aligned(p, 64));
  for (std::size_t i = 0; i < got.size(); i += 2) arena.deallocate(got[i]);
  for (int i = 0; i < 1000; ++i) REQUIRE(aligned(arena.allocate(), 64));

  RecordArena wide(100, 256);
  for (int i = 0; i < 20'000; ++i) REQUIRE(aligned(wide.allocate(), 256));
  RecordArena plain(24);  // the default: max_align_t
  for (int i = 0; i < 1000; ++i) REQUIRE(aligned(plain.allocate(), alignof(std::max_align_t)));
}

TEST_CASE("arena: an alignment not a power of two or over 2 MiB - or a record over 2 MiB - is refused", "[arena]") {
  CHECK_THROWS_AS(RecordArena(64, 48), std::invalid_argument);
  CHECK_THROWS_AS(RecordArena(64, std::size_t{4} << 20), std::invalid_argument);
  CHECK_NOTHROW(RecordArena(64, std::size_t{2} << 20));
  CHECK_THROWS_AS(RecordArena((std::size_t{2} << 20) + 1), std::invalid_argument);  // over one chunk
}
