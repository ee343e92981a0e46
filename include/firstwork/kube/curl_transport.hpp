#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "firstwork/core/clock.hpp"
#include "firstwork/kube/credentials.hpp"
#include "firstwork/kube/kube_transport.hpp"
#include "firstwork/kube/kubeconfig.hpp"

namespace boost::asio {
class io_context;
}

namespace firstwork::kube {

struct TransportOptions {
  std::chrono::milliseconds connectTimeout{10000};
  std::chrono::milliseconds requestTimeout{60000};  // non-streaming requests (LIST pages)
  size_t maxBodyBytes = 512u << 20;                 // LIST page bodies
  size_t maxErrorBodyBytes = 64u << 10;             // Status bodies of failed streams
  std::string userAgent = "firstworkd/0.1";
  bool http2 = true;  // HTTP/2 over TLS when the server offers it (ALPN), else HTTP/1.1
  /// Read coalescing: a socket read again within ten of these intervals of its previous read,
  /// and left drained, is not watched until the next multiple of the interval on the steady
  /// clock, so a trickling watch stream is read in batches, and many of them in one wakeup,
  /// instead of one wakeup per event. An event waits at most this long, and a scrape does not
  /// wait for it (readHeldStreams); a socket read only now and then, or one its read left data
  /// in, is watched at once, and nothing waits while a request that is not a stream (a LIST
  /// page) is in flight. Zero turns it off. 50 ms: at 500 events/s the daemon woke 0.24 times an
  /// event at 10 ms and 0.08 at 50, and its loop took half the CPU (bench/README.md, change 114).
  std::chrono::milliseconds readCoalesce{50};
  /// curl's receive buffer per request (CURLOPT_BUFFERSIZE): what one read can take.
  size_t readBufferBytes = 64u << 10;
};

/// What the transport's sockets did (diagnostics and tests).
struct TransportStats {
  uint64_t readActions = 0;     // curl_multi_socket_action calls for readable sockets
  uint64_t parks = 0;           // reads after which the socket was parked (readCoalesce)
  uint64_t watchedAgain = 0;    // parked sockets put back into the reactor (quiet, or not to be parked)
  uint64_t parkLooks = 0;       // interval ends whose parked sockets were looked at (a poll(2) each)
  uint64_t parkedLookedAt = 0;  // parked sockets looked at, over all those looks
  uint64_t readEarly = 0;       // parked sockets read before their park's end (readHeldStreams)
};

/// KubeTransport on libcurl. Every request of one cluster runs in one curl multi handle driven
/// by the daemon's event loop (CURLMOPT_SOCKETFUNCTION/TIMERFUNCTION mapped onto Asio
/// descriptors and a steady_timer), so a hundred watches cost no threads. TLS verification
/// is on (cluster CA as an in-memory blob; client certificate/key blobs; tls-server-name via
/// CURLOPT_CONNECT_TO so SNI and certificate checks use that name while the socket goes to
/// the configured host); `proxy-url` via CURLOPT_PROXY. Event-loop thread only.
class CurlTransport final : public KubeTransport {
 public:
  /// `credentials` must outlive the transport.
  CurlTransport(boost::asio::io_context& io, const Clock& clock, const RestConfig& config,
                CredentialSource& credentials, TransportOptions options = {});
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  // KubeTransport
  RequestId start(HttpRequest request, RequestCallbacks callbacks) override;
  void cancel(RequestId id) override;
  const std::string& server() const override;
  /// Reads every parked socket with data waiting (or an end of stream or error to read) now,
  /// with one poll(2) for all of them; one with nothing waiting stays parked as it was.
  size_t readHeldStreams() override;

  /// Requests in flight (tests, diagnostics).
  size_t active() const;
  TransportStats stats() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace firstwork::kube
