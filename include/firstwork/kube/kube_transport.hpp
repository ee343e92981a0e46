#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "firstwork/core/clock.hpp"

namespace firstwork::kube {

/// One GET against the API server.
struct HttpRequest {
  std::string path;        // absolute path with query, e.g. "/api/v1/pods?limit=500"
  bool streaming = false;  // WATCH: body delivered as it arrives, no overall timeout
  /// The body's expected size (a LIST page: the previous page's), when the response does not
  /// say (a large LIST comes chunked): the body buffer is reserved once for it instead of
  /// growing by doubling through fresh pages. 0: no hint.
  size_t bodySizeHint = 0;
  /// Memory to receive the body in (its capacity; what it holds is dropped): a LIST page's
  /// spent buffer, so that the next page is written over pages already touched instead of fresh
  /// ones (bench/README.md, change 56). Empty: the transport allocates.
  std::string bodyBuffer{};
};

/// Status line and the headers the client acts on.
struct ResponseHead {
  long status = 0;                                // 0: no response was received
  std::optional<SystemTime> date;                 // `Date` (server clock, 1 s resolution)
  std::optional<std::chrono::seconds> retryAfter;  // `Retry-After`, as a delay
};

/// How a request ended.
struct HttpResult {
  ResponseHead head;
  /// Whole body for non-streaming requests; for a streaming request only the body of a
  /// non-2xx answer (a metav1.Status), bounded.
  std::string body;
  /// Transport failure text (connect/TLS/reset/timeout/cut), empty when the exchange finished.
  std::string error;
  /// No request was sent because credentials could not be obtained (`error` says why).
  bool credentialsFailed = false;
};

/// Callbacks of one request; all run on the event-loop thread.
struct RequestCallbacks {
  /// Once, when the status line and headers are in (optional).
  std::function<void(const ResponseHead&)> onHead;
  /// Body bytes of a 2xx streaming response, in arbitrary pieces.
  std::function<void(std::string_view)> onData;
  /// Exactly once, unless the request was cancelled.
  std::function<void(HttpResult)> onDone;
};

/// HTTP access to one API server (seam: CurlTransport for real, FakeTransport in tests).
/// Authentication is the transport's business: it attaches the current credentials and, on a
/// 401, invalidates them so the next request carries fresh ones. Event-loop thread only.
class KubeTransport {
 public:
  using RequestId = uint64_t;
  virtual ~KubeTransport() = default;
  /// Starts a request. Callbacks never run inside start(); it is safe to call from callbacks.
  virtual RequestId start(HttpRequest request, RequestCallbacks callbacks) = 0;
  /// Abandons a request: none of its callbacks run afterwards. Safe inside its own callbacks;
  /// unknown or finished ids are ignored.
  virtual void cancel(RequestId id) = 0;
  /// "https://host:port" for log lines.
  virtual const std::string& server() const = 0;
  /// Reads now what waits on the streams whose reads are being held back to batch them (read
  /// coalescing), rather than at their interval's end: called before a scrape's step, so that the
  /// scrape counts every event that had arrived when it asked. Not from inside a callback of this
  /// transport. Returns how many streams were read; a transport that holds nothing back reads none.
  virtual size_t readHeldStreams() { return 0; }
};

/// Parses an HTTP-date (RFC 9110 IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, plus the
/// obsolete RFC 850 and asctime forms).
std::optional<SystemTime> parseHttpDate(std::string_view text);

/// Parses `Retry-After`: delay-seconds or an HTTP-date (relative to `now`, never negative).
std::optional<std::chrono::seconds> parseRetryAfter(std::string_view text, SystemTime now);

}  // namespace firstwork::kube
