#include "firstwork/core/small_string.hpp"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>
#include <sstream>
#include <unordered_set>
#include <utility>
#include <vector>

using firstwork::ShortString;
using firstwork::SmallString;

namespace {
// Whether the value's bytes lie inside the object itself.
template <typename S>
bool inlineIn(const S& s) {
  auto* p = reinterpret_cast<const char*>(&s);
  return s.data() >= p && s.data() < p + sizeof(S);
}
}  // namespace

TEST_CASE("small string: a uid is held inline, in 40 bytes") {
  STATIC_REQUIRE(sizeof(SmallString) == 40);
  const std::string uid = "9f3c2a1e-5b7d-4c8e-a6f0-1d2e3f4a5b6c";
  REQUIRE(uid.size() == 36);
  SmallString s(uid);
  CHECK_FALSE(s.onHeap());
  CHECK(inlineIn(s));
  CHECK(s.size() == 36);
  CHECK(s == uid);
  CHECK(s.view() == uid);
  CHECK(std::string(s.c_str()) == uid);  // NUL-terminated
}

TEST_CASE("short string: a name of up to 30 characters is held inline, in 32 bytes") {
  STATIC_REQUIRE(sizeof(ShortString) == 32);
  STATIC_REQUIRE(ShortString::kInlineBytes == 30);
  // A pod of a Job, and a Workload name of exactly 30 characters.
  for (std::string name : {"train-1234-abcd-0-xz7k2", "job-train-98765-qwer-012345678"}) {
    INFO(name);
    REQUIRE(name.size() > 15);  // past std::string's own inline 15
    REQUIRE(name.size() <= 30);
    ShortString s(name);
    CHECK_FALSE(s.onHeap());
    CHECK(inlineIn(s));
    CHECK(s == name);
    CHECK(std::string(s.c_str()) == name);
  }
  ShortString longer("train-98765-qwer-0-abcde-gpu-xyz12");
  CHECK(longer.onHeap());
  CHECK(longer == "train-98765-qwer-0-abcde-gpu-xyz12");
}

TEMPLATE_TEST_CASE("small string: the longest inline value, and one past it on the heap", "",
                   SmallString, ShortString, firstwork::BasicSmallString<48>) {
  using S = TestType;
  STATIC_REQUIRE(sizeof(S) == S::kInlineBytes + 2);
  const std::string at(S::kInlineBytes, 'x');
  S a(at);
  CHECK_FALSE(a.onHeap());
  CHECK(a == at);
  CHECK(std::string(a.c_str()) == at);
  const std::string past(S::kInlineBytes + 1, 'y');
  S b(past);
  CHECK(b.onHeap());
  CHECK_FALSE(inlineIn(b));
  CHECK(b.size() == past.size());
  CHECK(b == past);
  CHECK(std::string(b.c_str()) == past);
}

TEMPLATE_TEST_CASE("small string: empty by default, copies, moves and assignments keep the value",
                   "", SmallString, ShortString, firstwork::BasicSmallString<48>) {
  using S = TestType;
  S e;
  CHECK(e.empty());
  CHECK(e.size() == 0);
  CHECK(e == "");
  CHECK(std::string(e.c_str()).empty());
  const std::string longText(100, 'L');
  for (const std::string& v : {std::string("pod-a"), longText}) {
    S a(v);
    S copy = a;
    CHECK(copy == v);
    CHECK(a == v);
    if (a.onHeap()) CHECK(copy.data() != a.data());  // a copy has its own block
    S moved = std::move(a);
    CHECK(moved == v);
    CHECK(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty, as documented
    S target("something else, long enough to be held on the heap: 0123456789");
    target = moved;
    CHECK(target == v);
    target = std::move(copy);
    CHECK(target == v);
    CHECK(copy.empty());  // NOLINT(bugprone-use-after-move)
    target = "short";
    CHECK(target == "short");
    target = longText;
    CHECK(target == longText);
    target = std::string_view(v);
    CHECK(target == v);
    target.clear();
    CHECK(target.empty());
  }
}

TEMPLATE_TEST_CASE("small string: assigning a view of its own value", "", SmallString, ShortString,
                   firstwork::BasicSmallString<48>) {
  using S = TestType;
  S s("abcdef");
  s = s.view().substr(2);
  CHECK(s == "cdef");
  S l(std::string(60, 'a') + "tail");
  l = l.view().substr(50);
  CHECK(l == std::string(10, 'a') + "tail");
  CHECK_FALSE(l.onHeap());
  S l2(std::string(80, 'b') + "end");
  l2 = l2.view().substr(1);
  CHECK(l2 == std::string(79, 'b') + "end");
  CHECK(l2.onHeap());
  S self("self");
  auto& ref = self;
  self = ref;
  CHECK(self == "self");
}

TEMPLATE_TEST_CASE("small string: compares, orders, hashes and prints as its text", "", SmallString,
                   ShortString, firstwork::BasicSmallString<48>) {
  using S = TestType;
  S a("alpha"), b("beta"), a2(std::string("alpha"));
  CHECK(a == a2);
  CHECK(a != b);
  CHECK(a < b);
  CHECK(b > std::string_view("alpha"));
  CHECK(a < std::string("b"));
  CHECK(a == std::string("alpha"));
  CHECK(a != "alphabet");
  CHECK("alpha" == a);
  CHECK(std::hash<S>{}(a) == std::hash<std::string_view>{}("alpha"));
  std::unordered_set<S> set{a, b, a2};
  CHECK(set.size() == 2);
  std::map<S, int> m{{b, 2}, {a, 1}};
  CHECK(m.begin()->first == "alpha");
  CHECK(fmt::format("<{}>", b) == "<beta>");
  std::ostringstream os;
  os << a << "/" << S(std::string(50, 'z'));
  CHECK(os.str() == "alpha/" + std::string(50, 'z'));
  CHECK("ns/" + a == "ns/alpha");
  CHECK(a + "/x" == "alpha/x");
  CHECK(std::string("p-") + a == "p-alpha");
  CHECK(a.starts_with("al"));
  CHECK(a.ends_with("pha"));
  CHECK(a.find('p') == 2);
  CHECK(a.find("ph") == 2);
  CHECK(a.substr(1, 3) == "lph");
  CHECK(std::string(a.begin(), a.end()) == "alpha");
}

TEMPLATE_TEST_CASE("small string: a vector of them grows and keeps every value", "", SmallString,
                   ShortString, firstwork::BasicSmallString<48>) {
  using S = TestType;
  std::vector<S> v;
  auto value = [](int i) { return std::string(static_cast<size_t>(i % 70), char('a' + i % 26)); };
  for (int i = 0; i < 200; ++i) v.emplace_back(value(i));
  for (int i = 0; i < 200; ++i) CHECK(v[static_cast<size_t>(i)] == value(i));
}
