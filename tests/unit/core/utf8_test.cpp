#include "firstwork/core/utf8.hpp"

#include <catch2/catch.hpp>

#include <string>

using namespace firstwork;

TEST_CASE("UTF-8 sequences are measured as RFC 3629 defines them", "[core][utf8]") {
  CHECK(utf8SequenceAt("a", 0) == 1);
  CHECK(utf8SequenceAt("\xC3\xA9", 0) == 2);          // é U+00E9
  CHECK(utf8SequenceAt("\xE2\x82\xAC", 0) == 3);      // € U+20AC
  CHECK(utf8SequenceAt("\xF0\x9F\x98\x80", 0) == 4);  // U+1F600
  CHECK(utf8SequenceAt("\xC0\xAF", 0) == 0);          // overlong '/'
  CHECK(utf8SequenceAt("\xED\xA0\x80", 0) == 0);      // surrogate U+D800
  CHECK(utf8SequenceAt("\xF4\x90\x80\x80", 0) == 0);  // U+110000, above the range
  CHECK(utf8SequenceAt("\x80", 0) == 0);              // a continuation byte alone
  CHECK(utf8SequenceAt("\xE2\x82", 0) == 0);          // cut short by the end of the text
}

TEST_CASE("the first byte that is not UTF-8 is found", "[core][utf8]") {
  CHECK(firstInvalidUtf8("") == std::string_view::npos);
  CHECK(firstInvalidUtf8("plain ascii") == std::string_view::npos);
  CHECK(firstInvalidUtf8("caf\xC3\xA9 \xE2\x82\xAC") == std::string_view::npos);
  // "ok" (2 bytes) + é (2 bytes), then a lone 0xFF at offset 4.
  CHECK(firstInvalidUtf8("ok\xC3\xA9\xFFrest") == 4);
  CHECK(firstInvalidUtf8(std::string_view("\0\xFF", 2)) == 1);
}
