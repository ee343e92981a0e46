#pragma once
// Private to src/model: the simdjson On-Demand reading primitives every kind decoder is built from.
//
// Conventions (why they look the way they do):
// * Every reader returns `bool` (true = ok). On failure it fills `Ctx::reason`, and each enclosing
//   reader prepends its own path segment while the stack unwinds. The happy path therefore never
//   builds a path string; only an error pays for "status.conditions[2].lastTransitionTime".
// * JSON `null` is "absent" everywhere (the API server writes `lastProbeTime: null`,
//   `creationTimestamp: null`, `containers: null`).
// * The type of a value is checked before it is read, so a schema mismatch never puts simdjson's
//   iterator into an error state: the caller can skip the rest of a bad list item and go on.
#include <simdjson.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "firstwork/core/clock.hpp"
#include "firstwork/model/decode.hpp"
#include "firstwork/model/meta.hpp"

namespace firstwork::model::detail {

namespace od = simdjson::ondemand;

/// Identifiers (names, uids, keys, resource versions) longer than this are rejected: the API
/// validates them far below it (253 for names, 316 for qualified keys), so a longer one is hostile.
inline constexpr size_t kMaxIdentBytes = 512;
/// Free text (reasons, messages, label values) is cut to this many bytes on a UTF-8 boundary.
inline constexpr size_t kMaxTextBytes = 256;
/// Quantities longer than this are rejected before parsing (no real quantity comes close).
inline constexpr size_t kMaxQuantityBytes = 64;
/// Labels / annotations kept per object after the prefix filter (meta.hpp).
inline constexpr size_t kMaxKeyValues = 64;
/// Distinct resources in one ResourceList.
inline constexpr size_t kMaxResources = 32;
/// Default bound for lists whose entries we keep (conditions, podSets, devices, ...): beyond it the
/// object is rejected rather than silently truncated, because a dropped entry would falsify figures.
inline constexpr size_t kMaxEntries = 64;

/// State of one decode: the error being unwound and the end of the readable (padded) input.
struct Ctx {
  const char* end = nullptr;  // one past the last readable byte of the padded buffer
  const DecodeOptions* options = nullptr;  // null: keep everything
  std::string path;           // "status.conditions[2].lastTransitionTime", built on unwind
  std::string reason;         // "invalid RFC 3339 time ..."
  bool syntax = false;        // the JSON text itself is broken (not only the schema)

  bool fail(std::string why) {
    reason = std::move(why);
    return false;
  }
  /// A simdjson error. Type/range errors are schema errors; everything else means broken JSON.
  bool failJson(simdjson::error_code e);
  /// Prepends an object key to the path; always returns false (for `return c.in(key)`).
  bool in(std::string_view key);
  /// Prepends a map key (data, not schema) as `["key"]`.
  bool inMapKey(std::string_view key);
  /// Prepends an array index `[i]`.
  bool inIndex(size_t i);
  /// "path: reason" (or just the reason at the top).
  std::string message() const;
  void clear() {
    path.clear();
    reason.clear();
    syntax = false;
  }
};

const char* typeName(od::json_type t);

/// Cuts `s` to at most `max` bytes without splitting a UTF-8 sequence (the input is valid UTF-8,
/// simdjson checked it, and must stay valid: JSON writers downstream reject broken UTF-8).
std::string_view truncateUtf8(std::string_view s, size_t max);

/// Reads the type of `v`; fails on broken JSON.
bool typeOf(Ctx& c, od::value& v, od::json_type& t);

/// String or null (null → empty view, `present` false).
bool getString(Ctx& c, od::value& v, std::string_view& out, bool* present = nullptr);
/// An identifier: string ≤ kMaxIdentBytes, else error. Null leaves `dst` unchanged.
bool readIdent(Ctx& c, od::value& v, std::string& dst);
bool readIdent(Ctx& c, od::value& v, Interned& dst);
bool readIdent(Ctx& c, od::value& v, SmallString& dst);
bool readIdent(Ctx& c, od::value& v, ShortString& dst);
bool readIdent(Ctx& c, od::value& v, ResourceVersion& dst);
/// Free text truncated to `max` bytes. Null leaves `dst` unchanged.
bool readText(Ctx& c, od::value& v, std::string& dst, size_t max = kMaxTextBytes);
bool readText(Ctx& c, od::value& v, Interned& dst, size_t max = kMaxTextBytes);
bool readText(Ctx& c, od::value& v, SmallString& dst, size_t max = kMaxTextBytes);
/// A message: text, pooled when at most kPooledMessageBytes long (Interned::pooledUpTo).
bool readMessage(Ctx& c, od::value& v, Interned& dst);
/// A message checked (a string or null) but not kept: a Pod's or a Node's condition, a
/// container's state (bench/README.md, change 89).
bool checkMessage(Ctx& c, od::value& v);
bool readBool(Ctx& c, od::value& v, bool& dst);
bool readInt64(Ctx& c, od::value& v, int64_t& dst);
bool readInt32(Ctx& c, od::value& v, int32_t& dst);
/// RFC 3339 string; null → nullopt.
bool readTime(Ctx& c, od::value& v, std::optional<SystemTime>& dst);
/// RFC 3339 string; null leaves `dst` unchanged.
bool readTime(Ctx& c, od::value& v, SystemTime& dst);
/// RFC 3339 string; null → absent.
bool readTime(Ctx& c, od::value& v, OptionalTime& dst);
/// A resource.Quantity as milli-units: a string ("8", "500m", "80Gi") or, as Kubernetes accepts on
/// input, a JSON number. `present` is false for null.
bool readQuantity(Ctx& c, od::value& v, int64_t& milli, bool& present);

/// Whether `s` is the literal `lit`: its length, then its bytes as a few integer compares.
/// Written out because GCC left `std::string_view == "literal"` as a call to
/// `string_view::compare` and then to `memcmp` in the larger decoders (84 such calls an event,
/// ~3,000 instructions: bench/README.md, change 113); with the length a constant, `memcmp` of
/// it is expanded inline.
template <size_t N>
[[gnu::always_inline]] inline bool is(std::string_view s, const char (&lit)[N]) noexcept {
  return s.size() == N - 1 && std::memcmp(s.data(), lit, N - 1) == 0;
}

/// Whether `s` begins with the literal `lit`, compared as `is` does.
template <size_t N>
[[gnu::always_inline]] inline bool startsWith(std::string_view s, const char (&lit)[N]) noexcept {
  return s.size() >= N - 1 && std::memcmp(s.data(), lit, N - 1) == 0;
}

/// The first `"` or backslash at or after `p` and before `end`, or null. Every object key read
/// comes here (232 an event in benchmark 1's mix), and keys are short: the SSE2 loop looks at
/// 16 bytes for both characters at once, where two `memchr` calls (the closing quote, then a
/// backslash before it) each paid a call and its set-up for a key of a dozen bytes
/// (bench/README.md, change 113).
inline const char* findQuoteOrBackslash(const char* p, const char* end) noexcept {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  for (; end - p >= 16; p += 16) {
    const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const int mask = _mm_movemask_epi8(
        _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)));
    if (mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
  }
#endif
  for (; p < end; ++p) {
    if (*p == '"' || *p == '\\') return p;
  }
  return nullptr;
}

/// fieldKey's other cases: an escaped key (unescaped), a key out of bounds or unterminated.
bool fieldKeySlow(Ctx& c, od::field& f, std::string_view& key);

/// Key of `f` without copying when it has no escapes (the usual case), else unescaped. Inline:
/// called for every field of every object the decoders walk.
inline bool fieldKey(Ctx& c, od::field& f, std::string_view& key) {
  const char* p = f.key().raw();
  if (p != nullptr && p < c.end) {
    const char* q = findQuoteOrBackslash(p, c.end);
    if (q != nullptr && *q == '"') {
      key = std::string_view(p, static_cast<size_t>(q - p));
      return true;
    }
  }
  return fieldKeySlow(c, f, key);
}

/// Calls `fn(key, value)` for every field of the object `v` (null: no calls). A failing callback
/// gets `key` prepended to the error path. `mapKeys`: keys are data (labels, resources).
template <typename Fn>
bool forFields(Ctx& c, od::value& v, Fn&& fn, bool mapKeys = false) {
  od::json_type t;
  if (!typeOf(c, v, t)) return false;
  if (t == od::json_type::null) return true;
  if (t != od::json_type::object) return c.fail(std::string("expected object, got ") + typeName(t));
  od::object obj;
  if (auto e = v.get_object().get(obj)) return c.failJson(e);
  for (auto fr : obj) {
    od::field f;
    if (auto e = std::move(fr).get(f)) return c.failJson(e);
    std::string_view key;
    if (!fieldKey(c, f, key)) return false;
    if (!fn(key, f.value())) return mapKeys ? c.inMapKey(key) : c.in(key);
  }
  return true;
}

/// Calls `fn(index, element)` for every element of the array `v` (null: no calls). A failing
/// callback gets `[index]` prepended to the error path.
template <typename Fn>
bool forElements(Ctx& c, od::value& v, Fn&& fn) {
  od::json_type t;
  if (!typeOf(c, v, t)) return false;
  if (t == od::json_type::null) return true;
  if (t != od::json_type::array) return c.fail(std::string("expected array, got ") + typeName(t));
  od::array arr;
  if (auto e = v.get_array().get(arr)) return c.failJson(e);
  size_t i = 0;
  for (auto er : arr) {
    od::value el;
    if (auto e = std::move(er).get(el)) return c.failJson(e);
    if (!fn(i, el)) return c.inIndex(i);
    ++i;
  }
  return true;
}

/// Error for a list that outgrew its bound.
bool tooMany(Ctx& c, size_t max);

// ---- resource lists -------------------------------------------------------------------------

/// Extended resource: the name has a domain prefix ("nvidia.com/gpu", "example.com/gpu").
inline bool isExtendedResource(std::string_view name) {
  return name.find('/') != std::string_view::npos;
}
/// A resource that can stand for devices in Kueue accounting: everything except the core compute
/// resources. Keeps extended resources and logical DRA names such as "whole-gpus".
bool isDeviceResource(std::string_view name);

/// a + b, saturating at INT64_MAX (hostile quantities must not overflow into negatives).
int64_t saturatingAdd(int64_t a, int64_t b);
/// Adds `milli` to `name` (saturating; appends when new). False when the list is full.
bool addResource(ResourceList& list, std::string_view name, int64_t milli);
/// Sets `name` to max(current, milli). False when the list is full.
bool maxResource(ResourceList& list, std::string_view name, int64_t milli);

/// Releases the spare capacity a vector collected while growing (keeps tracked objects slim).
template <typename T>
void shrink(std::vector<T>& v) {
  if (v.capacity() > v.size()) v.shrink_to_fit();
}
template <typename T>
void shrink(CompactVector<T>& v) {
  if (v.capacity() > v.size()) v.shrink_to_fit();
}

/// Reads a ResourceList object keeping the names `keep` accepts; `sum` adds duplicates.
template <typename Keep>
bool readResourceList(Ctx& c, od::value& v, ResourceList& dst, Keep&& keep) {
  dst.clear();
  bool ok = forFields(
      c, v,
      [&](std::string_view name, od::value& q) {
        if (!keep(name)) return true;
        int64_t milli = 0;
        bool present = false;
        if (!readQuantity(c, q, milli, present)) return false;
        if (!present) return true;
        if (name.size() > kMaxIdentBytes) return c.fail("resource name too long");
        // Duplicate keys (hostile input): the last one wins, as in Go's encoding/json.
        for (auto& [n, m] : dst) {
          if (n == name) {
            m = milli;
            return true;
          }
        }
        if (dst.size() >= kMaxResources) return tooMany(c, kMaxResources);
        dst.emplace_back(std::string(name), milli);
        return true;
      },
      /*mapKeys=*/true);
  shrink(dst);
  return ok;
}

// ---- shared object parts --------------------------------------------------------------------

/// metav1.ObjectMeta (filtered labels/annotations, bounded owner references).
bool readMeta(Ctx& c, od::value& v, ObjectMeta& meta);
/// status.conditions[] (metav1.Condition, Pod and Node condition shapes).
/// `skip`, when given, names condition types not kept (e.g. kUnreadPodConditionTypes).
bool readConditions(Ctx& c, od::value& v, Conditions& dst,
                    std::span<const std::string_view> skip = {});
/// The same for Pods and Nodes: each message checked, not kept (BriefCondition).
bool readConditions(Ctx& c, od::value& v, BriefConditions& dst,
                    std::span<const std::string_view> skip = {});
/// A JSON array of strings (e.g. spec.clusters), bounded.
bool readStringList(Ctx& c, od::value& v, std::vector<std::string>& dst, size_t max = kMaxEntries);


/// A list of `{key, value, effect}` taints (Node spec.taints, ResourceSlice device taints): both
/// shapes carry the same three fields; at most `max` are kept, more is an error.
template <typename List>
bool readTaintList(Ctx& c, od::value& v, List& dst, size_t max) {
  dst.clear();
  bool ok = forElements(c, v, [&](size_t, od::value& e) {
    typename List::value_type t;
    bool ok2 = forFields(c, e, [&](std::string_view k, od::value& x) {
      if (is(k, "key")) return readIdent(c, x, t.key);
      if (is(k, "value")) return readIdent(c, x, t.value);
      if (is(k, "effect")) return readIdent(c, x, t.effect);
      return true;
    });
    if (!ok2) return false;
    if (dst.size() >= max) return tooMany(c, max);
    dst.push_back(std::move(t));
    return true;
  });
  shrink(dst);
  return ok;
}

}  // namespace firstwork::model::detail
