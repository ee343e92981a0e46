#include "firstwork/core/frozen_list.hpp"

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using firstwork::FrozenList;

namespace {

// Counts live instances, and throws on the copy that makes the `failAt`-th since reset.
struct Counted {
  static inline int live = 0;
  static inline int copies = 0;
  static inline int failAt = -1;
  std::string text;
  explicit Counted(std::string t) : text(std::move(t)) { ++live; }
  Counted(const Counted& o) : text(o.text) {
    if (copies++ == failAt) throw std::runtime_error("copy failed");
    ++live;
  }
  ~Counted() { --live; }
  bool operator==(const Counted& o) const { return text == o.text; }
};

std::vector<std::string> texts(const FrozenList<Counted>& l) {
  std::vector<std::string> out;
  for (const auto& c : l) out.push_back(c.text);
  return out;
}

}  // namespace

TEST_CASE("a frozen list takes 8 bytes and reads back what it was set to", "[core][frozen_list]") {
  STATIC_REQUIRE(sizeof(FrozenList<std::pair<int64_t, int64_t>>) == 8);
  FrozenList<std::pair<int64_t, int64_t>> l;
  CHECK(l.empty());
  CHECK(l.size() == 0);
  CHECK(l.begin() == l.end());
  CHECK(l.span().empty());
  // Every size from 1 to 20: up to 7 kept in the pointer's low bits, then in the block.
  for (int64_t n = 1; n <= 20; ++n) {
    std::vector<std::pair<int64_t, int64_t>> want;
    for (int64_t i = 0; i < n; ++i) want.emplace_back(i, 100 * n + i);
    l.assign(want);
    REQUIRE(l.size() == static_cast<size_t>(n));
    CHECK_FALSE(l.empty());
    CHECK(l.equals(want));
    CHECK(std::vector<std::pair<int64_t, int64_t>>(l.begin(), l.end()) == want);
    CHECK(l[static_cast<size_t>(n - 1)].second == 100 * n + n - 1);
    CHECK(l.front().second == 100 * n);
    CHECK(l.span().size() == static_cast<size_t>(n));
    CHECK(reinterpret_cast<uintptr_t>(l.begin()) % alignof(std::pair<int64_t, int64_t>) == 0);
  }
  l.clear();
  CHECK(l.empty());
  l.assign(std::vector<std::pair<int64_t, int64_t>>{});
  CHECK(l.empty());
}

TEST_CASE("a frozen list copies, moves and compares by its elements", "[core][frozen_list]") {
  Counted::live = 0;
  {
    const std::vector<Counted> three{Counted("a"), Counted("b"), Counted("c")};
    std::vector<Counted> nine;
    for (int i = 0; i < 9; ++i) nine.emplace_back(std::to_string(i));
    const int before = Counted::live;
    FrozenList<Counted> small;
    small.assign(three);
    FrozenList<Counted> large;
    large.assign(nine);
    CHECK(Counted::live == before + 12);
    CHECK(texts(small) == std::vector<std::string>{"a", "b", "c"});
    CHECK(large.size() == 9);

    FrozenList<Counted> copy(small);  // a block of its own
    CHECK(copy == small);
    CHECK(copy.begin() != small.begin());
    CHECK(Counted::live == before + 15);
    FrozenList<Counted> moved(std::move(copy));
    CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    CHECK(moved == small);
    CHECK(Counted::live == before + 15);
    CHECK_FALSE(moved == large);
    moved = large;  // replaced: the old elements go
    CHECK(moved == large);
    CHECK(Counted::live == before + 21);
    moved = std::move(small);
    CHECK(texts(moved) == std::vector<std::string>{"a", "b", "c"});
    CHECK(Counted::live == before + 12);
    const FrozenList<Counted>& same = moved;
    moved = same;  // self-assignment keeps the list
    CHECK(texts(moved) == std::vector<std::string>{"a", "b", "c"});
    large.clear();
    CHECK(Counted::live == before + 3);
  }
  CHECK(Counted::live == 0);
}

TEST_CASE("a frozen list whose copy throws keeps its old elements", "[core][frozen_list]") {
  Counted::live = 0;
  {
    const std::vector<Counted> old{Counted("x"), Counted("y")};
    std::vector<Counted> next;
    for (int i = 0; i < 10; ++i) next.emplace_back(std::to_string(i));
    FrozenList<Counted> l;
    l.assign(old);
    const int before = Counted::live;
    Counted::copies = 0;
    Counted::failAt = 4;  // the fifth copy of the ten
    CHECK_THROWS_AS(l.assign(next), std::runtime_error);
    Counted::failAt = -1;
    CHECK(Counted::live == before);  // the four made are gone again
    CHECK(texts(l) == std::vector<std::string>{"x", "y"});
  }
  CHECK(Counted::live == 0);
}
