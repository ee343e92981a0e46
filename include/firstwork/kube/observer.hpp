#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "firstwork/core/clock.hpp"
#include "firstwork/model/decode.hpp"

namespace firstwork::kube {

/// Why a reflector restarted its LIST or WATCH (the `reason` label; a fixed set).
enum class RestartReason : uint8_t {
  StreamEnd,       // the server ended the watch cleanly (timeoutSeconds): resume from last RV
  Expired,         // 410 Gone / Expired / ResourceVersionTooLarge: relist
  HttpError,       // an HTTP error status (5xx, unexpected 4xx) or an in-band ERROR event
  TransportError,  // connect/TLS failure, reset, a stream cut mid-event
  DecodeError,     // a watch line that is not a watch event, or a LIST body that is not a list
  Stall,           // no bytes for the stall timeout
  Unauthorized,    // 401, or credentials could not be obtained
  Throttled,       // 429
  TooLarge,        // a watch line over the size limit
};
inline constexpr size_t kRestartReasonCount = 9;
std::string_view restartReasonName(RestartReason reason);

/// What a reflector is doing (for logs, /readyz detail and tests).
enum class ReflectorState : uint8_t {
  Idle,         // not started
  Discovering,  // GET /apis/<group>
  Listing,      // paginated LIST
  Watching,     // a WATCH is open (or being opened)
  Backoff,      // waiting before a retry
  Unavailable,  // the server does not serve this resource; re-checked rarely
  Stopped,
};
std::string_view reflectorStateName(ReflectorState state);

/// "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR" (the wire names; the `type` label).
std::string_view watchEventTypeName(model::EventType type);

enum class RequestKind : uint8_t { List, Watch };
std::string_view requestKindName(RequestKind kind);

/// The daemon's own view of its connection to a cluster (the `probe` source).
struct ConnectionEvent {
  bool connected = false;
  SystemTime at{};           // when the change was observed
  SystemTime lastContact{};  // last time bytes arrived from the server (≤ at)
  std::string detail;        // e.g. the transport error that showed the disconnection
};

/// Self-metrics hooks of the Kubernetes access layer; the integrator maps them onto Prometheus
/// families (`firstwork_watch_*`, `firstwork_decode_errors_total`, ...). Every method has an
/// empty default. Called on the event-loop thread; `cluster` and `resource` are label values
/// (config cluster name, plural resource name) valid for the call only.
class KubeObserver {
 public:
  virtual ~KubeObserver() = default;
  /// A request finished (status 0 = no response).
  virtual void onRequest(std::string_view cluster, std::string_view resource, RequestKind kind,
                         long status) {
    (void)cluster, (void)resource, (void)kind, (void)status;
  }
  /// A watch line decoded as an event, bookmarks and ERRORs included (watch_events_total).
  virtual void onWatchEvent(std::string_view cluster, std::string_view resource,
                            model::EventType type) {
    (void)cluster, (void)resource, (void)type;
  }
  /// An event delivered to the sink (synthetic = derived from a LIST, not a watch event).
  virtual void onEvent(std::string_view cluster, std::string_view resource,
                       model::EventType type, bool synthetic) {
    (void)cluster, (void)resource, (void)type, (void)synthetic;
  }
  virtual void onRestart(std::string_view cluster, std::string_view resource,
                         RestartReason reason) {
    (void)cluster, (void)resource, (void)reason;
  }
  /// An object (LIST item or watch event object) that could not be decoded and was skipped.
  virtual void onDecodeError(std::string_view cluster, std::string_view resource) {
    (void)cluster, (void)resource;
  }
  /// 1 while the store is synced and a watch is established.
  virtual void onWatchUp(std::string_view cluster, std::string_view resource, bool up) {
    (void)cluster, (void)resource, (void)up;
  }
  virtual void onTrackedObjects(std::string_view cluster, std::string_view resource,
                                size_t count) {
    (void)cluster, (void)resource, (void)count;
  }
  virtual void onStateChange(std::string_view cluster, std::string_view resource,
                             ReflectorState state) {
    (void)cluster, (void)resource, (void)state;
  }
  /// Server `Date` − local wall clock, in seconds (1 s resolution), per response.
  virtual void onClockSkew(std::string_view cluster, double seconds) {
    (void)cluster, (void)seconds;
  }
  virtual void onConnection(std::string_view cluster, const ConnectionEvent& event) {
    (void)cluster, (void)event;
  }
};

}  // namespace firstwork::kube
