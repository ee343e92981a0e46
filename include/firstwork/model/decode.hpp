#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "firstwork/core/result.hpp"
#include "firstwork/model/object.hpp"

namespace firstwork::model {

/// metav1.Status, as sent in an in-band watch ERROR event or an error response body.
struct ApiStatus {
  int32_t code = 0;
  std::string reason;   // e.g. "Expired", "Gone", "Timeout"
  std::string message;
  /// status.details.causes[].reason contains "ResourceVersionTooLarge".
  bool resourceVersionTooLarge = false;
};

enum class EventType : uint8_t { Added, Modified, Deleted, Bookmark, Error };

/// One watch event line decoded. A malformed *object* in an otherwise well-formed event still
/// yields the type and (when readable) the resourceVersion, with `decodeError` set and no object:
/// the reflector can then count it, skip it and keep its place in the stream.
struct WatchEvent {
  EventType type = EventType::Added;
  std::string resourceVersion;  // object.metadata.resourceVersion (bookmarks included)
  std::optional<Object> object;  // set for ADDED/MODIFIED/DELETED when decoding succeeded
  std::string decodeError;       // why `object` is missing
  ApiStatus status;              // for ERROR
  bool initialEventsEnd = false;  // BOOKMARK with annotation k8s.io/initial-events-end=true
};

/// One page of a LIST response. Items that fail to decode are skipped and described in
/// `itemErrors` (the page itself is still good).
struct ListPage {
  std::string resourceVersion;
  std::string continueToken;
  int64_t remainingItemCount = -1;  // -1 when absent
  std::vector<Object> items;
  /// "items[<i>]: <field path>: <why>"; at most kMaxItemErrors are kept, `skippedItems` counts all.
  std::vector<std::string> itemErrors;
  int64_t skippedItems = 0;
};
inline constexpr size_t kMaxItemErrors = 100;

/// What a decoder keeps that not every reader reads. The defaults keep everything.
struct DecodeOptions {
  /// The ResourceSlice device attributes kept, by name; nullopt keeps every one. An attribute is
  /// kept when its name without its domain ("gpu.nvidia.com/type" -> "type") is one of these
  /// without theirs, so that each spelling a reader may compare it by ("type", published by a
  /// driver, is "<driver>/type") is kept. A GPU driver publishes a dozen attributes a device
  /// (uuid, product, PCI addresses, driver versions), of which the inventory reads one or two:
  /// the daemon keeps those (inventory::deviceAttributesRead; bench/README.md, change 78).
  std::optional<std::vector<std::string>> deviceAttributes;

  /// Whether a device attribute of this name is kept.
  bool keepsDeviceAttribute(std::string_view name) const;
};

// Decoding uses simdjson On-Demand in one pass and keeps only the slim model fields. Every function
// is thread-safe (each thread owns its parser and scratch buffer) and never throws. Errors name the
// field path, e.g. "status.conditions[2].lastTransitionTime: invalid RFC 3339 time ... (Pod ns/name)".

/// Decodes one watch event line (without the trailing newline). An error result means the line
/// is not a watch event at all (not JSON, no `type`, unknown type).
Result<WatchEvent> decodeWatchEvent(std::string_view line, Kind kind,
                                    const DecodeOptions& options = {});
/// Same, without copying: appends simdjson's padding to `line` for the parse and restores its size
/// afterwards (its capacity may grow). The fast path for the reflector's line buffer.
Result<WatchEvent> decodeWatchEvent(std::string& line, Kind kind,
                                    const DecodeOptions& options = {});

/// Decodes a LIST response body of `kind`. Error only when the body is not a list.
Result<ListPage> decodeList(std::string_view body, Kind kind, const DecodeOptions& options = {});
/// Same, padding `body` in place instead of copying it (see decodeWatchEvent(std::string&)).
Result<ListPage> decodeList(std::string& body, Kind kind, const DecodeOptions& options = {});

/// The continue token of a LIST body, read from the body's head alone (everything before its
/// `items` key): the API server writes a list's metadata before its items, so the reflector can
/// ask for the next page before it decodes this one. nullopt when the head does not tell (no
/// metadata before the items, no `items` key in the first 64 KiB, a head that is not JSON); an
/// empty string when the head's metadata has no token (the last page). Cheap: the head is a few
/// hundred bytes. decodeList's continueToken stays the authority: a caller that acted on this
/// one checks it against that.
std::optional<std::string> peekListContinue(std::string_view body);

/// Decodes one object of `kind` (the JSON of the object itself).
Result<Object> decodeObject(std::string_view json, Kind kind, const DecodeOptions& options = {});

/// Decodes a metav1.Status body (HTTP error responses).
Result<ApiStatus> decodeStatus(std::string_view body);

/// Releases the calling thread's parser and scratch buffers when they hold more than
/// `keepBytes` of input capacity (a LIST page of 500 pods grows them to tens of MiB, which a
/// watch line never needs); the next large document grows them again. Returns the input
/// capacity released (0 when under `keepBytes`). The daemon calls it from its loop thread, where
/// decoding happens, once synced.
size_t releaseDecodeBuffers(size_t keepBytes);

}  // namespace firstwork::model
