#include "firstwork/model/decode.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "detail/decoders.hpp"
#include "firstwork/core/utf8.hpp"

namespace firstwork::model {
namespace {

using detail::Ctx;
using detail::is;
namespace od = detail::od;

/// Larger documents are refused outright (a LIST page of 500 large pods is a few MB).
constexpr size_t kMaxDocumentBytes = size_t{256} << 20;
/// After a document larger than this, the thread's parser and scratch buffer are released, so one
/// huge LIST does not pin its buffers for the life of the thread.
constexpr size_t kRetainBytes = size_t{16} << 20;
/// Continue tokens are opaque base64 (≈100–300 bytes); anything beyond this is not one.
constexpr size_t kMaxContinueBytes = 8192;
/// Status messages are logged, not stored per object, so they may be longer than object text.
constexpr size_t kMaxStatusMessageBytes = 1024;

/// Per thread: simdjson parsers are reusable but not shareable, and reuse keeps their buffers.
struct ThreadState {
  od::parser parser{kMaxDocumentBytes};
  std::string scratch;
  std::string repaired;  // a copy of an input that was not valid UTF-8, repaired
};

ThreadState& threadState() {
  thread_local ThreadState state;
  return state;
}

void resetThreadState(ThreadState& st) {
  std::string().swap(st.scratch);
  std::string().swap(st.repaired);
  st.parser = od::parser{kMaxDocumentBytes};
}

/// The input with SIMDJSON_PADDING readable bytes after it: either the caller's string, padded in
/// place and restored on destruction, or a copy in the thread's scratch buffer.
class PaddedInput {
 public:
  explicit PaddedInput(std::string_view in) : len_(in.size()), original_(in.size()) {
    std::string& s = threadState().scratch;
    s.assign(in);
    s.append(simdjson::SIMDJSON_PADDING, ' ');
    data_ = s.data();
    cap_ = s.size();
  }
  explicit PaddedInput(std::string& in) : owner_(&in), len_(in.size()), original_(in.size()) {
    in.append(simdjson::SIMDJSON_PADDING, ' ');
    data_ = in.data();
    cap_ = in.size();
  }
  PaddedInput(const PaddedInput&) = delete;
  PaddedInput& operator=(const PaddedInput&) = delete;
  ~PaddedInput() {
    if (owner_ != nullptr) owner_->resize(original_);
    if (original_ > kRetainBytes) resetThreadState(threadState());
  }

  const char* data() const { return data_; }
  size_t size() const { return len_; }
  const char* end() const { return data_ + cap_; }

  /// Starts the parse; an error here means the text is not JSON. Text that is not valid UTF-8
  /// is parsed as repaired (see repairUtf8()): one bad byte must not cost a whole LIST page or
  /// stall a watch on a line that can never decode.
  Status iterate(od::document& doc) {
    if (len_ > kMaxDocumentBytes) {
      return makeError(fmt::format("document of {} bytes exceeds the {} MiB limit", len_,
                                   kMaxDocumentBytes >> 20));
    }
    auto e = threadState().parser.iterate(data_, len_, cap_).get(doc);
    if (e == simdjson::UTF8_ERROR && repairs_.empty() && repairUtf8()) {
      e = threadState().parser.iterate(data_, len_, cap_).get(doc);
    }
    if (e) return makeError(fmt::format("invalid JSON: {}", simdjson::error_message(e)));
    return Ok{};
  }

  /// Bytes replaced by U+FFFD because they were not valid UTF-8 (0: the input was valid).
  size_t repairs() const { return repairs_.size(); }
  /// Whether [from, to) — positions in data() — holds a replaced byte: that part of the document
  /// (a list item, the event's object) came with invalid UTF-8 and is not trusted.
  bool repairedWithin(const char* from, const char* to) const {
    if (repairs_.empty() || from == nullptr) return false;
    const size_t a = static_cast<size_t>(from - data_);
    const size_t b = to == nullptr ? len_ : static_cast<size_t>(to - data_);
    auto it = std::lower_bound(repairs_.begin(), repairs_.end(), a);
    return it != repairs_.end() && *it < b;
  }

 private:
  /// Switches to a copy in which every byte that does not belong to a valid UTF-8 sequence is
  /// replaced by U+FFFD — what Go's encoding/json (the API server's writer) would have sent — and
  /// remembers where. False when the input was valid after all.
  bool repairUtf8() {
    const std::string_view in(data_, len_);
    std::string& out = threadState().repaired;
    out.clear();
    out.reserve(len_ + 64 + simdjson::SIMDJSON_PADDING);
    for (size_t i = 0; i < in.size();) {
      const size_t n = utf8SequenceAt(in, i);
      if (n == 0) {
        repairs_.push_back(out.size());
        out.append("\xEF\xBF\xBD");
        ++i;
      } else {
        out.append(in.substr(i, n));
        i += n;
      }
    }
    if (repairs_.empty()) return false;
    len_ = out.size();
    out.append(simdjson::SIMDJSON_PADDING, ' ');
    data_ = out.data();
    cap_ = out.size();
    return true;
  }

  std::string* owner_ = nullptr;
  const char* data_ = nullptr;
  size_t len_ = 0;
  size_t cap_ = 0;
  size_t original_ = 0;
  std::vector<size_t> repairs_;  // positions of U+FFFD written by repairUtf8(), ascending
};

/// After the root value was read completely: is there anything but whitespace left?
bool atEnd(od::document& doc) {
  auto loc = doc.current_location();
  return loc.error() == simdjson::OUT_OF_BOUNDS;
}

/// "path: reason (Kind ns/name)" — the identity helps an operator find the object.
std::string objectError(const Ctx& c, const Object& obj, Kind kind) {
  const ObjectMeta& m = metaOf(obj);
  if (m.name.empty()) return c.message();
  if (m.namespace_.empty()) return fmt::format("{} ({} {})", c.message(), kindName(kind), m.name);
  return fmt::format("{} ({} {}/{})", c.message(), kindName(kind), m.namespace_, m.name);
}

Status rootObject(Ctx& c, od::document& doc, od::value& root) {
  if (auto e = doc.get_value().get(root)) {
    return makeError(e == simdjson::SCALAR_DOCUMENT_AS_VALUE
                         ? std::string("not a JSON object")
                         : fmt::format("invalid JSON: {}", simdjson::error_message(e)));
  }
  od::json_type t;
  if (!detail::typeOf(c, root, t)) return makeError(c.message());
  if (t != od::json_type::object) {
    return makeError(fmt::format("not a JSON object but {}", detail::typeName(t)));
  }
  return Ok{};
}

bool readApiStatus(Ctx& c, od::value& v, ApiStatus& s) {
  return detail::forFields(c, v, [&](std::string_view k, od::value& x) {
    if (is(k, "kind")) {
      std::string_view kind;
      bool present = false;
      if (!detail::getString(c, x, kind, &present)) return false;
      if (present && !is(kind, "Status")) {
        return c.fail(fmt::format("expected Status, got \"{}\"", detail::truncateUtf8(kind, 64)));
      }
      return true;
    }
    if (is(k, "code")) return detail::readInt32(c, x, s.code);
    if (is(k, "reason")) return detail::readText(c, x, s.reason);
    if (is(k, "message")) return detail::readText(c, x, s.message, kMaxStatusMessageBytes);
    if (is(k, "details")) {
      return detail::forFields(c, x, [&](std::string_view dk, od::value& dx) {
        if (!is(dk, "causes")) return true;
        return detail::forElements(c, dx, [&](size_t, od::value& cause) {
          return detail::forFields(c, cause, [&](std::string_view ck, od::value& cx) {
            if (!is(ck, "reason")) return true;  // StatusCause.Type is serialised as "reason"
            std::string_view r;
            if (!detail::getString(c, cx, r)) return false;
            if (r.find("ResourceVersionTooLarge") != std::string_view::npos) {
              s.resourceVersionTooLarge = true;
            }
            return true;
          });
        });
      });
    }
    return true;
  });
}

// ---- watch events ----

std::optional<EventType> eventType(std::string_view s) {
  if (is(s, "ADDED")) return EventType::Added;
  if (is(s, "MODIFIED")) return EventType::Modified;
  if (is(s, "DELETED")) return EventType::Deleted;
  if (is(s, "BOOKMARK")) return EventType::Bookmark;
  if (is(s, "ERROR")) return EventType::Error;
  return std::nullopt;
}

constexpr std::string_view kInitialEventsEnd = "k8s.io/initial-events-end";

/// A BOOKMARK keeps only its resourceVersion and the streaming-list end marker.
bool readBookmark(Ctx& c, od::value& v, WatchEvent& ev) {
  return detail::forFields(c, v, [&](std::string_view k, od::value& x) {
    if (!is(k, "metadata")) return true;
    return detail::forFields(c, x, [&](std::string_view mk, od::value& mx) {
      if (is(mk, "resourceVersion")) return detail::readIdent(c, mx, ev.resourceVersion);
      if (!is(mk, "annotations")) return true;
      return detail::forFields(
          c, mx,
          [&](std::string_view ak, od::value& ax) {
            if (ak != kInitialEventsEnd) return true;
            std::string_view val;
            if (!detail::getString(c, ax, val)) return false;
            ev.initialEventsEnd = is(val, "true");
            return true;
          },
          /*mapKeys=*/true);
    });
  });
}

/// Decodes the event's object according to its type. Schema problems end up in ev.decodeError;
/// returns false only when the JSON itself is broken (then the line is not an event).
bool readEventObject(Ctx& c, od::value& v, Kind kind, WatchEvent& ev) {
  c.clear();
  ev.decodeError.clear();
  ev.object.reset();
  ev.resourceVersion.clear();
  ev.initialEventsEnd = false;
  ev.status = ApiStatus{};
  od::json_type t;
  if (!detail::typeOf(c, v, t)) return false;
  if (t == od::json_type::null) {
    ev.decodeError = "object: missing";
    return true;
  }
  switch (ev.type) {
    case EventType::Bookmark:
      if (!readBookmark(c, v, ev)) {
        ev.decodeError = c.message();
      } else if (ev.resourceVersion.empty()) {
        ev.decodeError = "metadata.resourceVersion: missing";
      }
      break;
    case EventType::Error:
      if (!readApiStatus(c, v, ev.status)) ev.decodeError = c.message();
      break;
    default: {
      Object obj;
      bool ok = detail::readObject(c, v, kind, obj);
      ev.resourceVersion = metaOf(obj).resourceVersion.str();
      if (ok) {
        ev.object = std::move(obj);
      } else {
        ev.decodeError = objectError(c, obj, kind);
      }
    }
  }
  return !c.syntax;
}

/// The object's resourceVersion found by a targeted second look (after a decode failure that
/// happened before metadata was reached). Empty when it is not readable either.
std::string recoverResourceVersion(od::document& doc) {
  doc.rewind();
  od::value obj, meta;
  std::string_view rv;
  if (doc.find_field_unordered("object").get(obj)) return {};
  if (obj.find_field_unordered("metadata").get(meta)) return {};
  if (meta.find_field_unordered("resourceVersion").get_string().get(rv)) return {};
  if (rv.size() > detail::kMaxIdentBytes) return {};
  return std::string(rv);
}

Result<WatchEvent> decodeEvent(PaddedInput& in, Kind kind, const DecodeOptions& options) {
  od::document doc;
  if (auto st = in.iterate(doc); !st) return makeError(st.error());
  Ctx c;
  c.end = in.end();
  c.options = &options;
  od::value root;
  if (auto st = rootObject(c, doc, root); !st) return makeError("watch event: " + st.error());

  WatchEvent ev;
  bool haveType = false, haveObject = false, deferObject = false;
  std::string badType;
  bool ok = detail::forFields(c, root, [&](std::string_view k, od::value& x) {
    if (is(k, "type")) {
      std::string_view s;
      if (!detail::getString(c, x, s)) return false;
      auto t = eventType(s);
      if (!t) {
        badType = detail::truncateUtf8(s, 32);
        return c.fail("unknown watch event type");
      }
      ev.type = *t;
      haveType = true;
      // A (duplicate) type after the object: decode the object again once the final type is known.
      if (haveObject) deferObject = true;
      return true;
    }
    if (is(k, "object")) {
      haveObject = true;
      if (!haveType) {
        deferObject = true;  // decoded after the loop, once the type is known
        return true;
      }
      deferObject = false;
      if (!readEventObject(c, x, kind, ev)) return false;  // broken JSON; forFields adds "object"
      c.clear();
    }
    return true;
  });
  if (!ok) {
    if (!badType.empty()) return makeError(fmt::format("unknown watch event type \"{}\"", badType));
    return makeError("watch event: " + c.message());
  }
  if (!haveType) return makeError("watch event without a type");
  if (!atEnd(doc)) return makeError("watch event: trailing content after the event object");
  if (deferObject) {
    doc.rewind();
    od::value obj;
    if (auto e = doc.find_field_unordered("object").get(obj)) {
      return makeError(fmt::format("watch event: invalid JSON: {}", simdjson::error_message(e)));
    }
    if (!readEventObject(c, obj, kind, ev)) {
      c.in("object");
      return makeError("watch event: " + c.message());
    }
  }
  if (!haveObject) ev.decodeError = "object: missing";
  bool objectEvent = ev.type == EventType::Added || ev.type == EventType::Modified ||
                     ev.type == EventType::Deleted;
  if (objectEvent && in.repairs() > 0) {
    // Parsed only after repair: the event keeps its place in the stream (type, RV), the object
    // is not trusted and is skipped like any other undecodable one.
    ev.object.reset();
    ev.decodeError = fmt::format("invalid UTF-8 ({} bytes)", in.repairs());
  }
  if (objectEvent && !ev.decodeError.empty() && ev.resourceVersion.empty() && haveObject) {
    ev.resourceVersion = recoverResourceVersion(doc);
  }
  return ev;
}

// ---- lists ----

Result<ListPage> decodeListBody(PaddedInput& in, Kind kind, const DecodeOptions& options) {
  od::document doc;
  if (auto st = in.iterate(doc); !st) return makeError(st.error());
  Ctx c;
  c.end = in.end();
  c.options = &options;
  od::value root;
  if (auto st = rootObject(c, doc, root); !st) return makeError("list: " + st.error());

  ListPage page;
  // The list's apiVersion is checked, not kept: no kind keeps its own (change 80).
  std::string listKind, listApiVersion;
  bool haveItems = false;
  // With a repaired document: where each item starts (and the items array ends), and which item
  // each kept object came from, so that only items holding a replaced byte are dropped.
  std::vector<const char*> itemStarts;
  std::vector<size_t> keptFrom;
  const char* itemsEnd = nullptr;
  bool ok = detail::forFields(c, root, [&](std::string_view k, od::value& x) {
    if (is(k, "kind")) return detail::readIdent(c, x, listKind);
    if (is(k, "apiVersion")) return detail::readIdent(c, x, listApiVersion);
    if (is(k, "metadata")) {
      return detail::forFields(c, x, [&](std::string_view mk, od::value& mx) {
        if (is(mk, "resourceVersion")) return detail::readIdent(c, mx, page.resourceVersion);
        if (is(mk, "remainingItemCount")) return detail::readInt64(c, mx, page.remainingItemCount);
        if (is(mk, "continue")) {
          std::string_view token;
          if (!detail::getString(c, mx, token)) return false;
          if (token.size() > kMaxContinueBytes) return c.fail("continue token too long");
          page.continueToken.assign(token);
        }
        return true;
      });
    }
    if (is(k, "items")) {
      haveItems = true;
      page.items.clear();
      page.itemErrors.clear();
      page.skippedItems = 0;
      itemStarts.clear();
      keptFrom.clear();
      bool itemsOk = detail::forElements(c, x, [&](size_t i, od::value& item) {
        if (in.repairs() > 0) {
          const char* at = nullptr;
          itemStarts.push_back(item.current_location().get(at) ? nullptr : at);
        }
        Object obj;
        if (detail::readObject(c, item, kind, obj)) {
          page.items.push_back(std::move(obj));
          keptFrom.push_back(i);
          return true;
        }
        if (c.syntax) return false;
        // A bad item is skipped and reported; the rest of the page is still good.
        ++page.skippedItems;
        if (page.itemErrors.size() < kMaxItemErrors) {
          page.itemErrors.push_back(fmt::format("items[{}]: {}", i, objectError(c, obj, kind)));
        }
        c.clear();
        return true;
      });
      if (itemsOk && in.repairs() > 0 && doc.current_location().get(itemsEnd)) itemsEnd = nullptr;
      return itemsOk;
    }
    return true;
  });
  if (!ok) return makeError("list: " + c.message());
  if (in.repairs() > 0) {
    // Items holding a byte that was not valid UTF-8 are skipped and reported; the others stand.
    std::vector<Object> kept;
    for (size_t k = 0; k < page.items.size(); ++k) {
      const size_t i = keptFrom[k];
      const char* from = i < itemStarts.size() ? itemStarts[i] : nullptr;
      const char* to = i + 1 < itemStarts.size() ? itemStarts[i + 1] : itemsEnd;
      if (from != nullptr && !in.repairedWithin(from, to)) {
        kept.push_back(std::move(page.items[k]));
        continue;
      }
      ++page.skippedItems;
      if (page.itemErrors.size() < kMaxItemErrors) {
        Ctx bad;
        bad.fail("invalid UTF-8");
        page.itemErrors.push_back(fmt::format("items[{}]: {}", i, objectError(bad, page.items[k], kind)));
      }
    }
    page.items = std::move(kept);
  }
  if (!atEnd(doc)) return makeError("list: trailing content after the list object");
  if (is(listKind, "Status")) return makeError("list: the response is a Status, not a list");
  if (!haveItems) return makeError("list: no items field (not a list)");
  return page;
}

Result<Object> decodeObjectBody(PaddedInput& in, Kind kind, const DecodeOptions& options) {
  od::document doc;
  if (auto st = in.iterate(doc); !st) return makeError(st.error());
  Ctx c;
  c.end = in.end();
  c.options = &options;
  od::value root;
  if (auto st = rootObject(c, doc, root); !st) return makeError(st.error());
  Object obj;
  if (!detail::readObject(c, root, kind, obj)) return makeError(objectError(c, obj, kind));
  if (!atEnd(doc)) return makeError("trailing content after the object");
  if (in.repairs() > 0) {
    Ctx bad;
    bad.fail(fmt::format("invalid UTF-8 ({} bytes)", in.repairs()));
    return makeError(objectError(bad, obj, kind));
  }
  return obj;
}

}  // namespace

Result<WatchEvent> decodeWatchEvent(std::string_view line, Kind kind,
                                    const DecodeOptions& options) {
  PaddedInput in(line);
  return decodeEvent(in, kind, options);
}

Result<WatchEvent> decodeWatchEvent(std::string& line, Kind kind, const DecodeOptions& options) {
  PaddedInput in(line);
  return decodeEvent(in, kind, options);
}

Result<ListPage> decodeList(std::string_view body, Kind kind, const DecodeOptions& options) {
  PaddedInput in(body);
  return decodeListBody(in, kind, options);
}

Result<ListPage> decodeList(std::string& body, Kind kind, const DecodeOptions& options) {
  PaddedInput in(body);
  return decodeListBody(in, kind, options);
}

std::optional<std::string> peekListContinue(std::string_view body) {
  // Where the head may end: the first `"items"` that stands as a key of the list object (a
  // comma before it, a colon after it). One inside a string of the head cuts that string, so
  // the head does not parse and the next candidate is tried.
  constexpr size_t kMaxHeadBytes = size_t{64} << 10;
  constexpr int kMaxCandidates = 8;
  const std::string_view window = body.substr(0, kMaxHeadBytes);
  constexpr std::string_view kItems = "\"items\"";
  auto isSpace = [](char ch) { return ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t'; };
  size_t from = 0;
  for (int candidate = 0; candidate < kMaxCandidates; ++candidate) {
    const size_t at = window.find(kItems, from);
    if (at == std::string_view::npos) return std::nullopt;
    from = at + 1;
    size_t after = at + kItems.size();
    while (after < window.size() && isSpace(window[after])) ++after;
    if (after >= window.size() || window[after] != ':') continue;
    size_t before = at;
    while (before > 0 && isSpace(window[before - 1])) --before;
    if (before == 0 || window[before - 1] != ',') continue;  // `{"items"`: no head before it
    // The head as an object of its own: everything before that comma, closed.
    std::string head(window.substr(0, before - 1));
    head += '}';
    PaddedInput in(head);
    od::document doc;
    if (!in.iterate(doc)) continue;
    Ctx c;
    c.end = in.end();
    od::value root;
    if (!rootObject(c, doc, root)) continue;
    // Read as decodeListBody reads it, so that the two agree on every head that parses.
    bool haveMetadata = false;
    std::string token;
    const bool ok = detail::forFields(c, root, [&](std::string_view k, od::value& x) {
      if (!is(k, "metadata")) return true;
      haveMetadata = true;
      token.clear();
      return detail::forFields(c, x, [&](std::string_view mk, od::value& mx) {
        if (!is(mk, "continue")) return true;
        std::string_view value;
        if (!detail::getString(c, mx, value)) return false;
        if (value.size() > kMaxContinueBytes) return c.fail("continue token too long");
        token.assign(value);
        return true;
      });
    });
    if (!ok || !atEnd(doc)) continue;
    if (!haveMetadata) return std::nullopt;
    return token;
  }
  return std::nullopt;
}

Result<Object> decodeObject(std::string_view json, Kind kind, const DecodeOptions& options) {
  PaddedInput in(json);
  return decodeObjectBody(in, kind, options);
}

namespace {
// "gpu.nvidia.com/type" -> "type"; an unqualified name as it is.
std::string_view withoutDomain(std::string_view name) {
  const size_t slash = name.find('/');
  return slash == std::string_view::npos ? name : name.substr(slash + 1);
}
}  // namespace

bool DecodeOptions::keepsDeviceAttribute(std::string_view name) const {
  if (!deviceAttributes) return true;
  const std::string_view bare = withoutDomain(name);
  return std::any_of(deviceAttributes->begin(), deviceAttributes->end(),
                     [&](const std::string& kept) { return withoutDomain(kept) == bare; });
}

Result<ApiStatus> decodeStatus(std::string_view body) {
  PaddedInput in(body);
  od::document doc;
  if (auto st = in.iterate(doc); !st) return makeError(st.error());
  Ctx c;
  c.end = in.end();
  od::value root;
  if (auto st = rootObject(c, doc, root); !st) return makeError("status: " + st.error());
  ApiStatus s;
  if (!readApiStatus(c, root, s)) return makeError("status: " + c.message());
  if (!atEnd(doc)) return makeError("status: trailing content after the object");
  if (s.code == 0 && s.reason.empty() && s.message.empty()) {
    return makeError("status: no code, reason or message (not a Status)");
  }
  return s;
}

size_t releaseDecodeBuffers(size_t keepBytes) {
  ThreadState& st = threadState();
  const size_t held = std::max({st.parser.capacity(), st.scratch.capacity(), st.repaired.capacity()});
  if (held <= keepBytes) return 0;
  resetThreadState(st);
  return held;
}

}  // namespace firstwork::model
