#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "detail/json.hpp"
#include "firstwork/core/quantity.hpp"
#include "firstwork/core/rfc3339.hpp"

namespace firstwork::model::detail {

bool Ctx::failJson(simdjson::error_code e) {
  switch (e) {
    case simdjson::INCORRECT_TYPE:
    case simdjson::NUMBER_OUT_OF_RANGE:
      break;
    default:
      syntax = true;
  }
  reason = fmt::format("invalid JSON: {}", simdjson::error_message(e));
  return false;
}

bool Ctx::in(std::string_view key) {
  std::string_view k = truncateUtf8(key, 64);
  if (path.empty()) {
    path.assign(k);
  } else if (path.front() == '[') {
    path.insert(0, k);
  } else {
    path.insert(0, 1, '.');
    path.insert(0, k);
  }
  return false;
}

bool Ctx::inMapKey(std::string_view key) {
  std::string seg = fmt::format("[\"{}\"]", truncateUtf8(key, 64));
  if (!path.empty() && path.front() != '[') seg.push_back('.');
  path.insert(0, seg);
  return false;
}

bool Ctx::inIndex(size_t i) {
  std::string seg = fmt::format("[{}]", i);
  if (!path.empty() && path.front() != '[') seg.push_back('.');
  path.insert(0, seg);
  return false;
}

std::string Ctx::message() const {
  if (path.empty()) return reason;
  return path + ": " + reason;
}

const char* typeName(od::json_type t) {
  switch (t) {
    case od::json_type::array:
      return "array";
    case od::json_type::object:
      return "object";
    case od::json_type::number:
      return "number";
    case od::json_type::string:
      return "string";
    case od::json_type::boolean:
      return "boolean";
    case od::json_type::null:
      return "null";
  }
  return "unknown";
}

std::string_view truncateUtf8(std::string_view s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  // Step back over continuation bytes (10xxxxxx) so the cut lands before a lead byte.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

bool typeOf(Ctx& c, od::value& v, od::json_type& t) {
  if (auto e = v.type().get(t)) return c.failJson(e);
  return true;
}

bool getString(Ctx& c, od::value& v, std::string_view& out, bool* present) {
  od::json_type t;
  if (!typeOf(c, v, t)) return false;
  if (t == od::json_type::null) {
    out = {};
    if (present) *present = false;
    return true;
  }
  if (t != od::json_type::string) return c.fail(std::string("expected string, got ") + typeName(t));
  if (auto e = v.get_string().get(out)) return c.failJson(e);
  if (present) *present = true;
  return true;
}

namespace {

/// An identifier's text; `present` is false for null.
bool identView(Ctx& c, od::value& v, std::string_view& s, bool& present) {
  if (!getString(c, v, s, &present)) return false;
  if (present && s.size() > kMaxIdentBytes) {
    return c.fail(fmt::format("longer than {} bytes ({})", kMaxIdentBytes, s.size()));
  }
  return true;
}

}  // namespace

bool readIdent(Ctx& c, od::value& v, std::string& dst) {
  std::string_view s;
  bool present = false;
  if (!identView(c, v, s, present)) return false;
  if (present) dst.assign(s);
  return true;
}

bool readIdent(Ctx& c, od::value& v, Interned& dst) {
  std::string_view s;
  bool present = false;
  if (!identView(c, v, s, present)) return false;
  if (present) dst = Interned(s);
  return true;
}

namespace {

template <size_t N>
bool readSmallIdent(Ctx& c, od::value& v, BasicSmallString<N>& dst) {
  std::string_view s;
  bool present = false;
  if (!identView(c, v, s, present)) return false;
  if (present) dst = s;
  return true;
}

}  // namespace

bool readIdent(Ctx& c, od::value& v, SmallString& dst) { return readSmallIdent(c, v, dst); }
bool readIdent(Ctx& c, od::value& v, ShortString& dst) { return readSmallIdent(c, v, dst); }

bool readIdent(Ctx& c, od::value& v, ResourceVersion& dst) {
  std::string_view s;
  bool present = false;
  if (!identView(c, v, s, present)) return false;
  if (present) dst.assign(s);
  return true;
}

bool readText(Ctx& c, od::value& v, std::string& dst, size_t max) {
  std::string_view s;
  bool present = false;
  if (!getString(c, v, s, &present)) return false;
  if (present) dst.assign(truncateUtf8(s, max));
  return true;
}

bool readText(Ctx& c, od::value& v, SmallString& dst, size_t max) {
  std::string_view s;
  bool present = false;
  if (!getString(c, v, s, &present)) return false;
  if (present) dst = truncateUtf8(s, max);
  return true;
}

bool readText(Ctx& c, od::value& v, Interned& dst, size_t max) {
  std::string_view s;
  bool present = false;
  if (!getString(c, v, s, &present)) return false;
  if (present) dst = Interned(truncateUtf8(s, max));
  return true;
}

bool readMessage(Ctx& c, od::value& v, Interned& dst) {
  std::string_view s;
  bool present = false;
  if (!getString(c, v, s, &present)) return false;
  if (present) dst = Interned::pooledUpTo(truncateUtf8(s, kMaxTextBytes), kPooledMessageBytes);
  return true;
}

bool checkMessage(Ctx& c, od::value& v) {
  std::string_view s;
  return getString(c, v, s);
}

bool readBool(Ctx& c, od::value& v, bool& dst) {
  od::json_type t;
  if (!typeOf(c, v, t)) return false;
  if (t == od::json_type::null) return true;
  if (t != od::json_type::boolean) return c.fail(std::string("expected boolean, got ") + typeName(t));
  if (auto e = v.get_bool().get(dst)) return c.failJson(e);
  return true;
}

namespace {

std::string_view trimToken(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

bool readInt64(Ctx& c, od::value& v, int64_t& dst) {
  od::json_type t;
  if (!typeOf(c, v, t)) return false;
  if (t == od::json_type::null) return true;
  if (t != od::json_type::number) return c.fail(std::string("expected integer, got ") + typeName(t));
  int64_t n = 0;
  if (auto e = v.get_int64().get(n)) {
    if (e != simdjson::INCORRECT_TYPE && e != simdjson::NUMBER_OUT_OF_RANGE) return c.failJson(e);
    std::string_view tok = v.raw_json_token();
    return c.fail(fmt::format("expected a 64-bit integer, got {}", truncateUtf8(trimToken(tok), 32)));
  }
  dst = n;
  return true;
}

bool readInt32(Ctx& c, od::value& v, int32_t& dst) {
  int64_t n = dst;
  if (!readInt64(c, v, n)) return false;
  if (n < std::numeric_limits<int32_t>::min() || n > std::numeric_limits<int32_t>::max()) {
    return c.fail(fmt::format("{} is out of the int32 range", n));
  }
  dst = static_cast<int32_t>(n);
  return true;
}

bool readTime(Ctx& c, od::value& v, std::optional<SystemTime>& dst) {
  std::string_view s;
  bool present = false;
  if (!getString(c, v, s, &present)) return false;
  if (!present) {
    dst.reset();
    return true;
  }
  // SystemTime counts nanoseconds in an int64: only about 1678..2262 is representable, and the
  // conversion of a year outside it overflows. Checked here, before parsing.
  if (s.size() >= 4 && s.substr(0, 4).find_first_not_of("0123456789") == std::string_view::npos) {
    int year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    if (year < 1678 || year > 2261) {
      return c.fail(fmt::format("time \"{}\" is outside the representable years 1678-2261",
                                truncateUtf8(s, 64)));
    }
  }
  auto t = parseRfc3339(s);
  if (!t) return c.fail(t.error());
  // No API server or kubelet stamps a time before the Unix epoch (their clocks do not go there,
  // and Go writes an unset time as null); such a value is hostile and would make latencies of
  // decades out of one object.
  if (*t < SystemTime{}) {
    return c.fail(fmt::format("time \"{}\" is before 1970-01-01", truncateUtf8(s, 64)));
  }
  dst = *t;
  return true;
}

bool readTime(Ctx& c, od::value& v, SystemTime& dst) {
  std::optional<SystemTime> t;
  if (!readTime(c, v, t)) return false;
  if (t) dst = *t;
  return true;
}

bool readTime(Ctx& c, od::value& v, OptionalTime& dst) {
  std::optional<SystemTime> t;
  if (!readTime(c, v, t)) return false;
  dst = t;
  return true;
}

bool readQuantity(Ctx& c, od::value& v, int64_t& milli, bool& present) {
  od::json_type t;
  if (!typeOf(c, v, t)) return false;
  present = false;
  std::string_view text;
  if (t == od::json_type::null) return true;
  if (t == od::json_type::string) {
    if (auto e = v.get_string().get(text)) return c.failJson(e);
  } else if (t == od::json_type::number) {
    text = trimToken(v.raw_json_token());
  } else {
    return c.fail(std::string("expected quantity (string), got ") + typeName(t));
  }
  // Bounded before parsing: the quantity parser converts the digits with std::stold, which would
  // throw on an absurdly long number.
  if (text.size() > kMaxQuantityBytes) {
    return c.fail(fmt::format("quantity longer than {} bytes", kMaxQuantityBytes));
  }
  auto q = parseQuantityMilli(text);
  if (!q) return c.fail(q.error());
  milli = *q;
  present = true;
  return true;
}

bool fieldKeySlow(Ctx& c, od::field& f, std::string_view& key) {
  const char* p = f.key().raw();
  if (p == nullptr || p >= c.end) return c.fail("invalid JSON: object key out of bounds");
  const char* q = findQuoteOrBackslash(p, c.end);
  if (q == nullptr) {
    c.syntax = true;
    return c.fail("invalid JSON: unterminated object key");
  }
  if (*q == '"') {  // not reached from fieldKey, which returns these itself
    key = std::string_view(p, static_cast<size_t>(q - p));
    return true;
  }
  // Escaped key (never produced by the API server's encoder, but valid JSON): unescape it.
  if (auto e = f.unescaped_key().get(key)) return c.failJson(e);
  return true;
}

bool tooMany(Ctx& c, size_t max) { return c.fail(fmt::format("more than {} entries", max)); }

bool isDeviceResource(std::string_view name) {
  return !(is(name, "cpu") || is(name, "memory") || is(name, "ephemeral-storage") ||
           is(name, "storage") || is(name, "pods") || startsWith(name, "hugepages-"));
}

int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::numeric_limits<int64_t>::max();
  return r;
}

bool addResource(ResourceList& list, std::string_view name, int64_t milli) {
  for (auto& [n, m] : list) {
    if (n == name) {
      m = saturatingAdd(m, milli);
      return true;
    }
  }
  if (list.size() >= kMaxResources) return false;
  list.emplace_back(Interned(name), milli);
  return true;
}

bool maxResource(ResourceList& list, std::string_view name, int64_t milli) {
  for (auto& [n, m] : list) {
    if (n == name) {
      if (milli > m) m = milli;
      return true;
    }
  }
  if (list.size() >= kMaxResources) return false;
  list.emplace_back(Interned(name), milli);
  return true;
}

}  // namespace firstwork::model::detail
