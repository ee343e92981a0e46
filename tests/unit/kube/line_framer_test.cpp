#include "firstwork/kube/line_framer.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using firstwork::kube::LineFramer;

namespace {

std::vector<std::string> feedAll(LineFramer& f, const std::vector<std::string_view>& chunks,
                                 LineFramer::Outcome* last = nullptr) {
  std::vector<std::string> lines;
  for (auto c : chunks) {
    auto o = f.feed(c, [&](std::string_view l) {
      lines.emplace_back(l);
      return true;
    });
    if (last) *last = o;
  }
  return lines;
}

const std::string kStream =
    "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}\n"
    "{\"type\":\"BOOKMARK\"}\r\n"
    "\n"
    "{\"type\":\"DELETED\",\"object\":{}}\n";
const std::vector<std::string> kLines = {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}",
                                         "{\"type\":\"BOOKMARK\"}", "{\"type\":\"DELETED\",\"object\":{}}"};

}  // namespace

TEST_CASE("lines come out the same however the stream is chunked", "[kube][framer]") {
  std::string_view s = kStream;
  // Every split into three pieces (i, j) — covers splits inside lines, at '\r', at '\n'.
  for (size_t i = 0; i <= s.size(); ++i) {
    for (size_t j = i; j <= s.size(); ++j) {
      LineFramer f;
      auto lines = feedAll(f, {s.substr(0, i), s.substr(i, j - i), s.substr(j)});
      INFO("split at " << i << "," << j);
      REQUIRE(lines == kLines);
      REQUIRE(f.pending() == 0);
    }
  }
  // One byte at a time.
  LineFramer f;
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < s.size(); ++i) bytes.push_back(s.substr(i, 1));
  CHECK(feedAll(f, bytes) == kLines);
}

TEST_CASE("an incomplete last line is held back", "[kube][framer]") {
  LineFramer f;
  auto lines = feedAll(f, {"one\ntw"});
  CHECK(lines == std::vector<std::string>{"one"});
  CHECK(f.pending() == 2);
  lines = feedAll(f, {"o\n"});
  CHECK(lines == std::vector<std::string>{"two"});
  CHECK(f.pending() == 0);
}

TEST_CASE("a line over the limit is an error and one at the limit is fine", "[kube][framer]") {
  LineFramer f(8);
  LineFramer::Outcome o{};
  // 8 bytes + '\n' is exactly the limit.
  auto lines = feedAll(f, {"1234", "5678\n"}, &o);
  CHECK(o == LineFramer::Outcome::Ok);
  CHECK(lines == std::vector<std::string>{"12345678"});
  // 9 bytes without a newline yet: already too long.
  feedAll(f, {"12345", "6789"}, &o);
  CHECK(o == LineFramer::Outcome::LineTooLong);
  CHECK(f.pending() == 0);
  // Too long inside one chunk.
  LineFramer g(8);
  feedAll(g, {"123456789\n"}, &o);
  CHECK(o == LineFramer::Outcome::LineTooLong);
}

TEST_CASE("the consumer can stop the framer", "[kube][framer]") {
  LineFramer f;
  int seen = 0;
  auto o = f.feed("a\nb\nc\n", [&](std::string_view) { return ++seen < 2; });
  CHECK(o == LineFramer::Outcome::Stopped);
  CHECK(seen == 2);
}
