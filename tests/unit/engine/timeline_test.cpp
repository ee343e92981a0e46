#include <catch2/catch.hpp>

#include "firstwork/engine/timeline.hpp"

using namespace firstwork;
using namespace firstwork::engine;
using namespace std::chrono_literals;

namespace {
struct V {
  int64_t n = 0;
  V& operator+=(const V& o) {
    n += o.n;
    return *this;
  }
  V& operator-=(const V& o) {
    n -= o.n;
    return *this;
  }
  bool operator==(const V& o) const = default;
};
const SystemTime T{std::chrono::seconds(1'000'000)};

double integral(const StepTimeline<V>& tl, SystemTime a, SystemTime b) {
  double s = 0;
  tl.forEachPiece(a, b, [&](SystemTime x, SystemTime y, const V& v) {
    s += static_cast<double>(v.n) * std::chrono::duration<double>(y - x).count();
  });
  return s;
}
}  // namespace

TEST_CASE("Intervals added in any order give the same function", "[engine][timeline]") {
  StepTimeline<V> a;
  StepTimeline<V> b;
  a.add(T, T + 10s, V{2});
  a.add(T + 5s, std::nullopt, V{3});
  b.add(T + 5s, std::nullopt, V{3});  // late event first
  b.add(T, T + 10s, V{2});
  for (auto t : {T - 1s, T, T + 4s, T + 5s, T + 9s, T + 10s, T + 100s}) {
    CHECK(a.at(t).n == b.at(t).n);
  }
  CHECK(a.at(T + 7s).n == 5);
  CHECK(a.at(T + 10s).n == 3);
  // ∫_T^{T+20} = 2·5 + 5·5 + 3·10 = 10 + 25 + 30 = 65
  CHECK(integral(a, T, T + 20s) == Approx(65.0));
}

TEST_CASE("Removing an interval restores the function and drops empty change points", "[engine][timeline]") {
  StepTimeline<V> tl;
  tl.add(T, T + 10s, V{4});
  tl.add(T + 2s, T + 3s, V{1});
  tl.remove(T + 2s, T + 3s, V{1});
  CHECK(tl.points() == 2);
  CHECK(tl.at(T + 2s).n == 4);
}

TEST_CASE("Pruning keeps the function from the floor on", "[engine][timeline]") {
  StepTimeline<V> tl;
  tl.add(T, T + 100s, V{4});
  tl.add(T + 10s, T + 20s, V{1});
  tl.pruneBefore(T + 15s);
  CHECK(tl.at(T + 15s).n == 5);
  CHECK(tl.at(T + 20s).n == 4);
  CHECK(tl.at(T + 100s).n == 0);
  // An interval removed after pruning, starting before the floor, still cancels exactly.
  tl.remove(T + 10s, T + 20s, V{1});
  CHECK(tl.at(T + 16s).n == 4);
  CHECK(tl.at(T + 25s).n == 4);
  // Pieces are maximal between change points.
  int pieces = 0;
  tl.forEachPiece(T + 15s, T + 200s, [&](SystemTime, SystemTime, const V&) { ++pieces; });
  CHECK(pieces == 2);
}
