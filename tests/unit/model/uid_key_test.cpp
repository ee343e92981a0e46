// UidKey: 16 bytes, a canonical lowercase UUID held as its 128 bits and anything else as text;
// either way the text reads back exactly, equality is the texts' equality, and a key hashes as
// its text does (the reflectors' key stores look keys up by the uid a decoded object carries).
#include "firstwork/model/uid_key.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

using firstwork::model::UidKey;

namespace {
// UUIDs as API servers write them (version 4, lowercase), from the fixtures' objects, and of
// other versions.
const std::vector<std::string> kUuids = {
    "9d4b8f52-7c3e-4a1b-9f6d-2e8c5a7b3d10", "b8f1c6a2-3d4e-4f5a-8b9c-0d1e2f3a4b5c",
    "00000000-0000-4000-8000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"};
}  // namespace

TEST_CASE("a uid that is a canonical UUID is held as its bits and reads back as it came",
          "[model][uidkey]") {
  for (const auto& text : kUuids) {
    UidKey k(text);
    CHECK(k.packed());
    CHECK_FALSE(k.empty());
    CHECK(k.str() == text);
    CHECK(k == text);
    CHECK(k == UidKey(text));
    CHECK(k.hash() == UidKey::hashOf(text));
  }
  // One digit apart in each half: not equal.
  CHECK_FALSE(UidKey(kUuids[0]) == UidKey("9d4b8f52-7c3e-4a1b-9f6d-2e8c5a7b3d11"));
  CHECK_FALSE(UidKey(kUuids[0]) == UidKey("8d4b8f52-7c3e-4a1b-9f6d-2e8c5a7b3d10"));
  CHECK_FALSE(UidKey(kUuids[0]) == "9d4b8f52-7c3e-4a1b-9f6d-2e8c5a7b3d11");
}

TEST_CASE("any other uid is held as text, whole", "[model][uidkey]") {
  const std::string longText(300, 'u');
  for (const std::string& text :
       {std::string("wl-uid-1"), std::string("x"),
        std::string("9D4B8F52-7C3E-4A1B-9F6D-2E8C5A7B3D10"),    // upper case
        std::string("00000000-0000-0000-0000-000000000000"),    // the nil UUID: version 0
        std::string("9d4b8f52-7c3e-0a1b-9f6d-2e8c5a7b3d10"),    // version 0
        std::string("9d4b8f527c3e4a1b9f6d2e8c5a7b3d10"),        // no dashes
        std::string("{9d4b8f52-7c3e-4a1b-9f6d-2e8c5a7b3d10}"),  // braces
        std::string("9d4b8f52-7c3e-4a1b-9f6d-2e8c5a7b3d1g"),    // not hex
        std::string("9d4b8f52_7c3e-4a1b-9f6d-2e8c5a7b3d10"),    // a dash missing
        std::string("9d4b8f52-7c3e-4a1b-9f6d-2e8c5a7b3d10 "), std::string("\xff\xfe"), longText}) {
    UidKey k(text);
    CHECK_FALSE(k.packed());
    CHECK_FALSE(k.empty());
    CHECK(k.str() == text);
    CHECK(k == text);
    CHECK(k == UidKey(text));
    CHECK(k.hash() == UidKey::hashOf(text));
  }
  // Upper and lower case are different uids (the texts differ).
  CHECK_FALSE(UidKey("9D4B8F52-7C3E-4A1B-9F6D-2E8C5A7B3D10") == UidKey(kUuids[0]));
  CHECK_FALSE(UidKey(kUuids[0]) == "9D4B8F52-7C3E-4A1B-9F6D-2E8C5A7B3D10");
  CHECK_FALSE(UidKey("wl-uid-1") == UidKey("wl-uid-2"));
  CHECK_FALSE(UidKey("wl-uid-1") == "wl-uid-10");
}

TEST_CASE("each character of a UUID is read: a non-digit anywhere is text, a digit anywhere tells",
          "[model][uidkey]") {
  const std::string base = kUuids[0];
  for (size_t i = 0; i < base.size(); ++i) {
    INFO("position " << i);
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    // Neither a digit nor a dash where either belongs ('g' past 'f', 'A' upper case, '/' and ':'
    // beside the digits' codes, '-' for a digit, a NUL byte): held as text, whole.
    for (char bad : {'g', 'A', '/', ':', '`', '-', '\0'}) {
      if (dash && bad == '-') continue;
      std::string text = base;
      text[i] = bad;
      UidKey k(text);
      CHECK_FALSE(k.packed());
      CHECK(k.str() == text);
      CHECK(k == text);
      CHECK_FALSE(k == UidKey(base));
      CHECK(UidKey::Probe(text).hash() == UidKey::hashOf(text));
    }
    if (dash) continue;
    // Another digit in its place: another key, packed, reading back as it came (never '0', which
    // at the version digit, position 14, would make a version-0 UUID, kept as text).
    std::string other = base;
    other[i] = base[i] == 'e' ? '3' : 'e';
    UidKey k(other);
    CHECK(k.packed());
    CHECK(k.str() == other);
    CHECK_FALSE(k == UidKey(base));
    CHECK_FALSE(k == UidKey::Probe(base));
    CHECK(k == UidKey::Probe(other));
  }
}

TEST_CASE("an empty uid is an empty key", "[model][uidkey]") {
  UidKey k("");
  CHECK(k.empty());
  CHECK_FALSE(k.packed());
  CHECK(k.str().empty());
  CHECK(k == "");
  CHECK(k == UidKey());
  CHECK_FALSE(k == "a");
  CHECK_FALSE(UidKey("a") == k);
  CHECK_FALSE(UidKey(kUuids[0]) == k);
}

TEST_CASE("uid keys copy and move whole", "[model][uidkey]") {
  for (const std::string& text : {std::string("wl-uid-7"), kUuids[1]}) {
    UidKey a(text);
    UidKey b(a);
    CHECK(b == a);
    CHECK(b.str() == text);
    UidKey c(std::move(a));
    CHECK(c.str() == text);
    CHECK(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from key is empty
    UidKey d("other");
    d = c;
    CHECK(d.str() == text);
    const UidKey& same = d;
    d = same;  // self-assignment keeps the value
    CHECK(d.str() == text);
    UidKey e(kUuids[2]);
    e = std::move(d);
    CHECK(e.str() == text);
  }
}

TEST_CASE("uid keys find each other in a hash set by key and by text", "[model][uidkey]") {
  struct Hash {
    using is_transparent = void;
    size_t operator()(const UidKey& k) const noexcept { return k.hash(); }
    size_t operator()(std::string_view s) const noexcept { return UidKey::hashOf(s); }
    size_t operator()(const UidKey::Probe& p) const noexcept { return p.hash(); }
  };
  struct Eq {
    using is_transparent = void;
    bool operator()(const UidKey& a, const UidKey& b) const noexcept { return a == b; }
    bool operator()(std::string_view a, const UidKey& b) const noexcept { return b == a; }
    bool operator()(const UidKey& a, std::string_view b) const noexcept { return a == b; }
    bool operator()(const UidKey::Probe& a, const UidKey& b) const noexcept { return b == a; }
    bool operator()(const UidKey& a, const UidKey::Probe& b) const noexcept { return a == b; }
  };
  std::unordered_set<UidKey, Hash, Eq> set;
  std::vector<std::string> texts = kUuids;
  for (int i = 0; i < 200; ++i) texts.push_back("pod-uid-" + std::to_string(i));
  for (const auto& t : texts) CHECK(set.emplace(t).second);
  for (const auto& t : texts) {
    CHECK(set.count(std::string_view(t)) == 1);
    CHECK(set.count(UidKey(t)) == 1);
    const UidKey::Probe probe(t);
    CHECK(probe.hash() == UidKey::hashOf(t));
    CHECK(probe.text() == t);
    auto it = set.find(probe);
    REQUIRE(it != set.end());
    CHECK(it->str() == t);
  }
  CHECK_FALSE(set.emplace(kUuids[3]).second);
  CHECK(set.count(std::string_view("pod-uid-200")) == 0);
  // Probes of texts not held, packable or not, and of the other case: nothing.
  for (const char* absent : {"pod-uid-200", "9d4b8f52-7c3e-4a1b-9f6d-2e8c5a7b3d11",
                             "9D4B8F52-7C3E-4A1B-9F6D-2E8C5A7B3D10", ""}) {
    CHECK(set.find(UidKey::Probe(absent)) == set.end());
  }
  // A probe and a key: equal exactly when the texts are.
  CHECK(UidKey("wl-uid-1") == UidKey::Probe("wl-uid-1"));
  CHECK_FALSE(UidKey("wl-uid-1") == UidKey::Probe("wl-uid-10"));
  CHECK_FALSE(UidKey(kUuids[0]) == UidKey::Probe("wl-uid-1"));
  CHECK_FALSE(UidKey("wl-uid-1") == UidKey::Probe(kUuids[0]));
  CHECK(UidKey() == UidKey::Probe(""));
  CHECK_FALSE(UidKey() == UidKey::Probe("x"));
  CHECK_FALSE(UidKey("x") == UidKey::Probe(""));
  CHECK(set.size() == texts.size());
}
