// ResourceVersion: 8 bytes, a canonical decimal held as its number and anything else as text;
// either way the text reads back exactly and equality is the texts' equality.
#include "firstwork/model/resource_version.hpp"

#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <utility>

using firstwork::model::ResourceVersion;

TEST_CASE("a resourceVersion reads back as it came", "[model][resourceversion]") {
  ResourceVersion empty;
  CHECK(empty.empty());
  CHECK(empty.str().empty());
  CHECK(empty == "");
  CHECK_FALSE(empty == "0");

  // etcd revisions: held as numbers.
  for (const char* text : {"0", "1", "884213", "9223372036854775807"}) {
    ResourceVersion rv(text);
    CHECK(rv.numeric());
    CHECK(rv.str() == text);
    CHECK(rv == text);
    CHECK_FALSE(rv.empty());
  }
  // Anything else is opaque text, kept whole: leading zeros, past 2^63 - 1, signs, spaces,
  // letters, and a value as long as an identifier may be.
  const std::string longText(253, 'x');
  for (const std::string& text :
       {std::string("007"), std::string("00"), std::string("9223372036854775808"),
        std::string("18446744073709551616"), std::string("123456789012345678901"),
        std::string("-1"), std::string("+1"), std::string(" 1"), std::string("1 "),
        std::string("12a"), std::string("MTIzNDU2Nzg5MA=="), longText}) {
    ResourceVersion rv(text);
    CHECK_FALSE(rv.numeric());
    CHECK(rv.str() == text);
    CHECK(rv == text);
  }
}

TEST_CASE("resourceVersions are equal exactly when their texts are", "[model][resourceversion]") {
  CHECK(ResourceVersion("884213") == ResourceVersion("884213"));
  CHECK_FALSE(ResourceVersion("884213") == ResourceVersion("884214"));
  // The same number in two spellings is two versions: the value is opaque.
  CHECK_FALSE(ResourceVersion("7") == ResourceVersion("007"));
  CHECK_FALSE(ResourceVersion("007") == ResourceVersion("7"));
  CHECK_FALSE(ResourceVersion("7") == "007");
  CHECK_FALSE(ResourceVersion("007") == "7");
  CHECK(ResourceVersion("007") == ResourceVersion("007"));
  CHECK_FALSE(ResourceVersion("007") == ResourceVersion("0070"));
  CHECK_FALSE(ResourceVersion("12a") == ResourceVersion());
  CHECK_FALSE(ResourceVersion() == ResourceVersion("0"));
  CHECK(ResourceVersion() == ResourceVersion());
  // Assigning the empty text empties it.
  ResourceVersion rv("12a");
  rv.assign("");
  CHECK(rv.empty());
  CHECK(rv == ResourceVersion());
}

TEST_CASE("resourceVersions copy, move and reassign", "[model][resourceversion]") {
  ResourceVersion text("abc-1");
  ResourceVersion number("42");
  ResourceVersion textCopy(text);
  ResourceVersion numberCopy(number);
  CHECK(textCopy == "abc-1");
  CHECK(numberCopy == "42");
  text.assign("abc-2");  // the copy has its own block
  CHECK(textCopy == "abc-1");

  ResourceVersion moved(std::move(textCopy));
  CHECK(moved == "abc-1");
  CHECK(textCopy.empty());  // NOLINT: a moved-from value is empty

  moved = number;  // text → number
  CHECK(moved == "42");
  CHECK(moved.numeric());
  moved = text;  // number → text
  CHECK(moved == "abc-2");
  const ResourceVersion& self = moved;
  moved = self;
  CHECK(moved == "abc-2");
  moved.assign(moved.str());
  CHECK(moved == "abc-2");
  moved = std::move(numberCopy);
  CHECK(moved == "42");
  moved.clear();
  CHECK(moved.empty());

  std::ostringstream os;
  os << ResourceVersion("007") << ' ' << ResourceVersion("55120");
  CHECK(os.str() == "007 55120");
  static_assert(sizeof(ResourceVersion) == 8);
}
