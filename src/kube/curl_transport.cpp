#include "firstwork/kube/curl_transport.hpp"

#include <curl/curl.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <poll.h>
#include <sys/ioctl.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "detail/log.hpp"
#include "detail/util.hpp"

namespace firstwork::kube {

namespace {

void globalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

void append(Slist& list, const std::string& item) {
  list.reset(curl_slist_append(list.release(), item.c_str()));
}

}  // namespace

struct CurlTransport::Impl : std::enable_shared_from_this<Impl> {
  struct Transfer {
    RequestId id = 0;
    HttpRequest request;
    RequestCallbacks callbacks;
    CURL* easy = nullptr;
    Slist headers;
    Slist connectTo;
    ResponseHead head;
    bool headDone = false;
    bool bodyReserved = false;
    bool cancelled = false;
    bool added = false;
    std::string body;
    std::string ownError;  // our reason to abort (e.g. body too large)
    uint64_t credentialGeneration = 0;
    Credentials credentials;  // kept alive: curl copies blobs, but the token is in `headers`
    char errbuf[CURL_ERROR_SIZE] = {};
    Impl* impl = nullptr;
  };

  struct Socket {
    explicit Socket(boost::asio::io_context& io, curl_socket_t fd) : descriptor(io, fd) {}
    ~Socket() {
      // curl owns the file descriptor: release it (deregisters it from the reactor) instead of
      // letting the descriptor close it.
      if (descriptor.is_open()) descriptor.release();
    }
    boost::asio::posix::stream_descriptor descriptor;
    int want = 0;
    bool readPending = false;
    bool writePending = false;
    // Read coalescing (TransportOptions::readCoalesce, Impl::park). While parked the descriptor
    // is out of the reactor until `parkedUntil`, when the transport's park timer looks at it
    // (lookAtParked); a socket read at its park's end stays out of the reactor until it is
    // parked again or watched (arm).
    bool parked = false;
    bool assignFailed = false;  // could not be put back into the reactor: curl was told once
    std::chrono::steady_clock::time_point lastRead{};
    std::chrono::steady_clock::time_point parkedUntil{};
  };

  Impl(boost::asio::io_context& ioc, const Clock& clk, const RestConfig& cfg,
       CredentialSource& creds, TransportOptions opts)
      : io(ioc),
        clock(clk),
        config(cfg),
        credentials(creds),
        options(std::move(opts)),
        timer(ioc),
        parkTimer(ioc) {}

  boost::asio::io_context& io;
  const Clock& clock;
  RestConfig config;
  CredentialSource& credentials;
  TransportOptions options;
  boost::asio::steady_timer timer;
  // One timer for every parked socket: they all end their park at the same multiple of the
  // interval, and are looked at together (lookAtParked). Pending while parkTimerAt is set.
  boost::asio::steady_timer parkTimer;
  std::optional<std::chrono::steady_clock::time_point> parkTimerAt;
  CURLM* multi = nullptr;
  std::string baseUrl;
  std::string connectTo;   // CURLOPT_CONNECT_TO entry when tls-server-name is set
  std::string hostHeader;  // the configured host, kept as the HTTP Host / :authority
  std::unordered_map<RequestId, std::unique_ptr<Transfer>> transfers;
  std::unordered_map<curl_socket_t, std::shared_ptr<Socket>> sockets;
  TransportStats stats;
  RequestId nextId = 1;
  bool shuttingDown = false;

  void init() {
    globalInit();
    computeUrls();
    multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &Impl::onSocket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &Impl::onTimer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, this);
    // All watches of a cluster share one HTTP/2 connection when the server speaks h2.
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
  }

  void computeUrls() {
    baseUrl = config.server;
    if (config.tlsServerName.empty()) return;
    CURLU* u = curl_url();
    if (curl_url_set(u, CURLUPART_URL, config.server.c_str(), 0) != CURLUE_OK) {
      curl_url_cleanup(u);
      return;  // the request fails with curl's own URL error
    }
    char* host = nullptr;
    char* port = nullptr;
    curl_url_get(u, CURLUPART_HOST, &host, 0);
    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
    char* explicitPort = nullptr;
    bool hasExplicitPort = curl_url_get(u, CURLUPART_PORT, &explicitPort, 0) == CURLUE_OK;
    if (host != nullptr && port != nullptr && config.tlsServerName != host) {
      // The URL names tls-server-name, so SNI and the certificate check use it; CONNECT_TO
      // sends the socket to the configured host. The Host header keeps the configured
      // authority (Go's tls ServerName changes only the TLS layer, not Host).
      connectTo = config.tlsServerName + ":" + port + ":" + host + ":" + port;
      hostHeader = std::string("Host: ") + host + (hasExplicitPort ? std::string(":") + port : "");
      curl_url_set(u, CURLUPART_HOST, config.tlsServerName.c_str(), 0);
      char* full = nullptr;
      if (curl_url_get(u, CURLUPART_URL, &full, 0) == CURLUE_OK) {
        baseUrl = full;
        while (!baseUrl.empty() && baseUrl.back() == '/') baseUrl.pop_back();
      }
      curl_free(full);
    }
    curl_free(host);
    curl_free(port);
    curl_free(explicitPort);
    curl_url_cleanup(u);
  }

  void shutdown() {
    shuttingDown = true;
    for (auto& [id, t] : transfers) {
      if (t->added) curl_multi_remove_handle(multi, t->easy);
      if (t->easy != nullptr) curl_easy_cleanup(t->easy);
      t->easy = nullptr;
    }
    transfers.clear();
    if (multi != nullptr) curl_multi_cleanup(multi);
    multi = nullptr;
    timer.cancel();
    parkTimer.cancel();
    parkTimerAt.reset();
    sockets.clear();
  }

  // --- requests ----------------------------------------------------------------------------

  RequestId start(HttpRequest request, RequestCallbacks callbacks) {
    auto t = std::make_unique<Transfer>();
    t->id = nextId++;
    t->request = std::move(request);
    if (!t->request.streaming) {
      t->body = std::move(t->request.bodyBuffer);
      t->body.clear();  // the capacity is kept
    }
    t->request.bodyBuffer = std::string();
    t->callbacks = std::move(callbacks);
    t->impl = this;
    RequestId id = t->id;
    transfers.emplace(id, std::move(t));
    // Never run callbacks (or curl) inside start(): callers may be inside a curl callback.
    std::weak_ptr<Impl> weak = weak_from_this();
    boost::asio::post(io, [weak, id] {
      if (auto self = weak.lock()) self->begin(id);
    });
    return id;
  }

  void begin(RequestId id) {
    if (!transfers.count(id)) return;
    std::weak_ptr<Impl> weak = weak_from_this();
    credentials.acquire([weak, id](Result<Credentials> creds) {
      if (auto self = weak.lock()) self->launch(id, std::move(creds));
    });
  }

  void launch(RequestId id, Result<Credentials> creds) {
    auto it = transfers.find(id);
    if (it == transfers.end() || shuttingDown) return;
    Transfer& t = *it->second;
    if (!creds) {
      HttpResult r;
      r.error = "credentials: " + creds.error();
      r.credentialsFailed = true;
      auto cb = std::move(t.callbacks.onDone);
      transfers.erase(it);
      if (cb) cb(std::move(r));
      return;
    }
    t.credentials = std::move(creds).value();
    t.credentialGeneration = t.credentials.generation;
    if (!setup(t)) {
      HttpResult r;
      r.error = "cannot set up request";
      auto cb = std::move(t.callbacks.onDone);
      if (t.easy != nullptr) curl_easy_cleanup(t.easy);
      transfers.erase(it);
      if (cb) cb(std::move(r));
      return;
    }
    CURLMcode mc = curl_multi_add_handle(multi, t.easy);
    if (mc != CURLM_OK) {
      HttpResult r;
      r.error = std::string("curl_multi_add_handle: ") + curl_multi_strerror(mc);
      auto cb = std::move(t.callbacks.onDone);
      curl_easy_cleanup(t.easy);
      transfers.erase(it);
      if (cb) cb(std::move(r));
      return;
    }
    t.added = true;
    // Send it now, not when the loop comes to curl's timer (which adding the handle set to 0):
    // work the caller has posted runs first otherwise, and a reflector posts the decode of a
    // LIST page right after asking for the next one, for the server to prepare that meanwhile.
    // launch runs from a handler of the loop, never inside a curl callback.
    int running = 0;
    curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
    processDone();
  }

  bool setup(Transfer& t) {
    t.easy = curl_easy_init();
    if (t.easy == nullptr) return false;
    CURL* e = t.easy;
    std::string url = baseUrl + t.request.path;
    curl_easy_setopt(e, CURLOPT_URL, url.c_str());
    curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
                     options.http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1);
    // No CURLOPT_PIPEWAIT: a transfer waiting for a pending connection to turn out
    // multiplexable is only re-examined when some transfer on it finishes, which a watch on an
    // HTTP/1.1 server never does. Without it a burst of requests may open a few connections
    // before the first one reports h2; later requests multiplex onto an h2 connection anyway.
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connectTimeout.count()));
    if (!t.request.streaming) {
      curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(options.requestTimeout.count()));
    }
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 15L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, options.userAgent.c_str());
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.errbuf);
    if (options.readBufferBytes > 0)
      curl_easy_setopt(e, CURLOPT_BUFFERSIZE, static_cast<long>(options.readBufferBytes));
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Impl::onWrite);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Impl::onHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(e, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);

    append(t.headers, "Accept: application/json");
    if (!t.credentials.token.empty()) {
      append(t.headers, "Authorization: Bearer " + t.credentials.token);
    }
    if (!hostHeader.empty()) append(t.headers, hostHeader);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.headers.get());

    if (config.insecureSkipTlsVerify) {
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    } else {
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
      curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
      if (!config.caPem.empty()) {
        curl_blob ca{config.caPem.data(), config.caPem.size(), CURL_BLOB_COPY};
        curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &ca);
      }
    }
    const std::string& cert =
        t.credentials.clientCertPem.empty() ? config.clientCertPem : t.credentials.clientCertPem;
    const std::string& key =
        t.credentials.clientCertPem.empty() ? config.clientKeyPem : t.credentials.clientKeyPem;
    if (!cert.empty()) {
      curl_blob c{const_cast<char*>(cert.data()), cert.size(), CURL_BLOB_COPY};
      curl_blob k{const_cast<char*>(key.data()), key.size(), CURL_BLOB_COPY};
      curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &c);
      curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
      curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &k);
      curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (!config.proxyUrl.empty()) curl_easy_setopt(e, CURLOPT_PROXY, config.proxyUrl.c_str());
    if (!connectTo.empty()) {
      append(t.connectTo, connectTo);
      curl_easy_setopt(e, CURLOPT_CONNECT_TO, t.connectTo.get());
    }
    return true;
  }

  void cancel(RequestId id) {
    auto it = transfers.find(id);
    if (it == transfers.end()) return;
    // Only flag it here: we may be inside this transfer's own curl callback, where neither
    // its std::function nor the curl handle may be destroyed. The removal runs from the loop.
    it->second->cancelled = true;
    std::weak_ptr<Impl> weak = weak_from_this();
    boost::asio::post(io, [weak, id] {
      if (auto self = weak.lock()) self->remove(id);
    });
  }

  void remove(RequestId id) {
    auto it = transfers.find(id);
    if (it == transfers.end()) return;
    Transfer& t = *it->second;
    if (t.added) curl_multi_remove_handle(multi, t.easy);
    if (t.easy != nullptr) curl_easy_cleanup(t.easy);
    transfers.erase(it);
  }

  // --- curl callbacks ----------------------------------------------------------------------

  static size_t onHeader(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    size_t n = size * count;
    if (t->cancelled) return 0;
    std::string_view line(data, n);
    if (line.rfind("HTTP/", 0) == 0) {
      // A new response (after 100 Continue or similar): forget earlier headers.
      t->head.date.reset();
      t->head.retryAfter.reset();
      return n;
    }
    std::string_view trimmed = detail::trim(line);
    if (trimmed.empty()) {
      long code = 0;
      curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
      if (code >= 200) t->impl->deliverHead(*t, code);
      return n;
    }
    auto colon = trimmed.find(':');
    if (colon == std::string_view::npos) return n;
    std::string_view name = trimmed.substr(0, colon);
    std::string_view value = detail::trim(trimmed.substr(colon + 1));
    if (detail::iequals(name, "date")) {
      t->head.date = parseHttpDate(value);
    } else if (detail::iequals(name, "retry-after")) {
      SystemTime ref = t->head.date ? *t->head.date : t->impl->clock.systemNow();
      t->head.retryAfter = parseRetryAfter(value, ref);
    }
    return n;
  }

  void deliverHead(Transfer& t, long code) {
    if (t.headDone) return;
    t.headDone = true;
    t.head.status = code;
    if (t.callbacks.onHead && !t.cancelled) t.callbacks.onHead(t.head);
  }

  static size_t onWrite(char* data, size_t size, size_t count, void* user) {
    auto* t = static_cast<Transfer*>(user);
    size_t n = size * count;
    if (t->cancelled) return 0;  // abort; the posted removal cleans up
    if (!t->headDone) {
      long code = 0;
      curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &code);
      t->impl->deliverHead(*t, code);
      if (t->cancelled) return 0;
    }
    bool success = t->head.status >= 200 && t->head.status < 300;
    if (!t->bodyReserved && success && !t->request.streaming) reserveBody(*t);
    if (t->request.streaming && success) {
      if (t->callbacks.onData) t->callbacks.onData(std::string_view(data, n));
      return t->cancelled ? 0 : n;
    }
    size_t limit = t->request.streaming ? t->impl->options.maxErrorBodyBytes
                                        : t->impl->options.maxBodyBytes;
    if (t->body.size() + n > limit) {
      if (t->request.streaming) {
        // An error body is only read for its Status; keep the start, drop the rest.
        t->body.append(data, limit - t->body.size());
        return n;
      }
      t->ownError = "response body larger than " + std::to_string(limit) + " bytes";
      return 0;
    }
    t->body.append(data, n);
    return n;
  }

  /// A LIST page of a few MB grown by doubling allocates and copies about twice its size, on
  /// freshly faulted pages (the kernel zeroing them was a quarter of the daemon's CPU in the
  /// initial sync): the buffer is reserved once, for the size the response announces or the
  /// request expects, plus the padding the decoder appends in place (simdjson::SIMDJSON_PADDING).
  static void reserveBody(Transfer& t) {
    t.bodyReserved = true;
    static constexpr size_t kDecoderPadding = 64;
    curl_off_t announced = -1;
    curl_easy_getinfo(t.easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced);
    size_t expected = announced > 0 ? static_cast<size_t>(announced) : t.request.bodySizeHint;
    // Reserved, not written: past what arrives nothing is resident. Still bounded, so that a
    // hostile Content-Length cannot ask for the whole body limit up front.
    static constexpr size_t kMaxReserve = size_t{64} << 20;
    expected = std::min({expected, t.impl->options.maxBodyBytes, kMaxReserve});
    if (expected > 0) t.body.reserve(expected + kDecoderPadding);
  }

  static int onSocket(CURL*, curl_socket_t fd, int what, void* user, void*) {
    auto* impl = static_cast<Impl*>(user);
    if (what == CURL_POLL_REMOVE) {
      auto it = impl->sockets.find(fd);
      if (it == impl->sockets.end()) return 0;
      // Deregister now, not in ~Socket: onReady() up the stack may still hold this Socket, and
      // curl hands the same fd straight back when it reuses the connection for the next request
      // (the next LIST page): registering it again while the old registration lives fails with
      // EEXIST ("assign: File exists") and broke every later request of the cluster.
      if (it->second->descriptor.is_open()) it->second->descriptor.release();
      impl->sockets.erase(it);
      return 0;
    }
    auto it = impl->sockets.find(fd);
    if (it == impl->sockets.end()) {
      try {
        it = impl->sockets.emplace(fd, std::make_shared<Socket>(impl->io, fd)).first;
      } catch (const std::exception& e) {
        detail::logger()->error("cannot watch socket fd={} error=\"{}\"", fd, e.what());
        return -1;  // makes curl fail the transfer instead of hanging it
      }
    }
    it->second->want = what;
    impl->arm(fd, it->second);  // a parked socket is armed when its interval ends
    return 0;
  }

  void arm(curl_socket_t fd, const std::shared_ptr<Socket>& sock) {
    if (sock->parked) return;  // the park's end arms it
    if (!sock->descriptor.is_open() && !watchAgain(fd, sock)) return;
    std::weak_ptr<Impl> weak = weak_from_this();
    std::weak_ptr<Socket> weakSock = sock;
    if ((sock->want & CURL_POLL_IN) && !sock->readPending) {
      sock->readPending = true;
      sock->descriptor.async_wait(
          boost::asio::posix::stream_descriptor::wait_read,
          [weak, weakSock, fd](const boost::system::error_code& ec) {
            auto self = weak.lock();
            auto s = weakSock.lock();
            if (!self || !s) return;
            s->readPending = false;
            self->onReady(fd, s, CURL_CSELECT_IN, ec);
          });
    }
    if ((sock->want & CURL_POLL_OUT) && !sock->writePending) {
      sock->writePending = true;
      sock->descriptor.async_wait(
          boost::asio::posix::stream_descriptor::wait_write,
          [weak, weakSock, fd](const boost::system::error_code& ec) {
            auto self = weak.lock();
            auto s = weakSock.lock();
            if (!self || !s) return;
            s->writePending = false;
            self->onReady(fd, s, CURL_CSELECT_OUT, ec);
          });
    }
  }

  /// Puts a socket read at its park's end back into the reactor (it stays out while it is read
  /// and parked again, interval after interval: two epoll_ctl calls and a reactor registration
  /// per read saved on a busy stream). False when that fails: curl is told (posted, once), fails
  /// the transfer, and its owner retries.
  bool watchAgain(curl_socket_t fd, const std::shared_ptr<Socket>& sock) {
    if (sock->assignFailed) return false;
    boost::system::error_code ec;
    sock->descriptor.assign(fd, ec);
    if (!ec) {
      ++stats.watchedAgain;
      return true;
    }
    sock->assignFailed = true;
    detail::logger()->error("cannot watch socket again fd={} error=\"{}\"", fd, ec.message());
    std::weak_ptr<Impl> weak = weak_from_this();
    std::weak_ptr<Socket> weakSock = sock;
    boost::asio::post(io, [weak, weakSock, fd, ec] {
      auto self = weak.lock();
      auto s = weakSock.lock();
      if (self && s) self->onReady(fd, s, CURL_CSELECT_IN, ec);
    });
    return false;
  }

  /// Bytes waiting in the socket's receive queue; -1 when the kernel cannot tell.
  static int pendingBytes(curl_socket_t fd) {
    int n = 0;
    return ::ioctl(fd, FIONREAD, &n) == 0 ? n : -1;
  }

  void onReady(curl_socket_t fd, const std::shared_ptr<Socket>& sock, int direction,
               const boost::system::error_code& ec) {
    if (ec == boost::asio::error::operation_aborted || shuttingDown) return;
    auto it = sockets.find(fd);
    if (it == sockets.end() || it->second != sock) return;  // fd was closed or reused
    int running = 0;
    curl_multi_socket_action(multi, fd, ec ? CURL_CSELECT_ERR : direction, &running);
    const bool read = direction == CURL_CSELECT_IN && !ec;
    if (read) ++stats.readActions;
    processDone();
    if (ec) return;
    it = sockets.find(fd);
    if (it == sockets.end() || it->second != sock) return;
    if (read && park(fd, sock)) return;
    arm(fd, sock);
  }

  /// Read coalescing (TransportOptions::readCoalesce). A socket read again within ten intervals
  /// of its previous read, and left drained, is parked: out of the reactor until the next
  /// multiple of the interval on the steady clock, so what trickles in meanwhile waits in the
  /// kernel and is taken by one read then. Every parked socket wakes at the same instant, so a
  /// loop with many trickling watches wakes once per interval, not once per event; a parked
  /// socket with nothing waiting stays parked until ten intervals have passed since its last
  /// read. A socket read only now and then is watched at once (no added latency); one its read
  /// left data in is too (no cap on throughput: curl reads until the socket is drained); and
  /// nothing is parked while a request that is not a stream is in flight (requestInFlight).
  bool park(curl_socket_t fd, const std::shared_ptr<Socket>& sock) {
    const auto window = options.readCoalesce;
    if (window.count() <= 0) return false;
    const auto now = std::chrono::steady_clock::now();
    // A socket's first read is never busy, however soon after the clock's epoch (the machine's
    // boot) it comes.
    const bool busy = sock->lastRead != std::chrono::steady_clock::time_point{} &&
                      now - sock->lastRead < kBusyIntervals * window;
    sock->lastRead = now;
    if (!busy || sock->want != CURL_POLL_IN || requestInFlight() || pendingBytes(fd) != 0) return false;
    // Out of the reactor while parked: Asio keeps a descriptor in epoll, edge-triggered, even
    // with no wait pending, so every event arriving on it would still wake the loop. (Already
    // out when this read was the park's end.)
    if (sock->descriptor.is_open()) sock->descriptor.release();
    ++stats.parks;
    parkUntilNextInterval(*sock, now);  // arm() adds no wait to a parked socket
    return true;
  }
  /// A stream of at least a few events a second (at the default interval) is parked.
  static constexpr int kBusyIntervals = 10;

  /// A request that is not a stream (a LIST page) is waited for: while one is in flight nothing
  /// is parked, so a sync or relist is never slowed (its pages may share a connection with
  /// watches over HTTP/2). A dozen transfers at most: the scan is cheaper than bookkeeping.
  bool requestInFlight() const {
    for (const auto& [id, t] : transfers)
      if (!t->request.streaming) return true;
    return false;
  }

  void parkUntilNextInterval(Socket& sock, std::chrono::steady_clock::time_point now) {
    const auto step = std::chrono::duration_cast<std::chrono::steady_clock::duration>(options.readCoalesce);
    sock.parked = true;
    sock.parkedUntil =
        std::chrono::steady_clock::time_point{(now.time_since_epoch() / step + 1) * step};
    lookAtParkedAt(sock.parkedUntil);
  }

  /// Sets the park timer for `when` unless it already runs for that instant or before (every
  /// park ends at a multiple of the interval, so a socket parked while the timer runs ends its
  /// park when the timer fires, and the timer is set once per interval, not once per park).
  void lookAtParkedAt(std::chrono::steady_clock::time_point when) {
    if (parkTimerAt && *parkTimerAt <= when) return;
    parkTimerAt = when;
    parkTimer.expires_at(when);  // cancels a wait for a later instant (not expected: see above)
    std::weak_ptr<Impl> weak = weak_from_this();
    parkTimer.async_wait([weak](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (!self || ec || self->shuttingDown) return;  // aborted: the wait that replaced it runs
      self->parkTimerAt.reset();
      self->lookAtParked();
    });
  }

  /// A parked socket looked at (pollParked): whether it has data waiting, or an end of stream or
  /// an error to read.
  struct Looked {
    curl_socket_t fd;
    std::weak_ptr<Socket> sock;
    bool readable = true;
  };
  /// The parked sockets `pick` chooses, looked at together with one poll(2) (one system call for
  /// all of them, where asking each for its pending bytes took one each). Zero timeout: a look,
  /// not a wait. Should the call fail, every socket counts as readable and curl's read finds out
  /// what there is.
  template <typename Pick>
  std::vector<Looked> pollParked(Pick&& pick) {
    std::vector<Looked> looked;
    std::vector<pollfd> fds;
    for (const auto& [fd, sock] : sockets) {
      if (!sock->parked || !pick(*sock)) continue;
      looked.push_back({fd, sock});
      fds.push_back(pollfd{fd, POLLIN, 0});
    }
    if (!fds.empty() && ::poll(fds.data(), static_cast<nfds_t>(fds.size()), 0) >= 0) {
      for (size_t i = 0; i < fds.size(); ++i)
        looked[i].readable = (fds[i].revents & (POLLIN | POLLERR | POLLHUP)) != 0;
    }
    return looked;
  }
  /// The socket looked at, unless a read of another has closed or replaced it (curl callbacks run
  /// in a read) or it is no longer parked.
  std::shared_ptr<Socket> stillParked(const Looked& l) const {
    auto sock = l.sock.lock();
    auto it = sockets.find(l.fd);
    if (!sock || it == sockets.end() || it->second != sock || !sock->parked) return nullptr;
    return sock;
  }

  /// At an interval's end, every socket whose park ends is looked at (pollParked): one with
  /// data waiting, or an end of stream or error to read, is read; one without stays parked
  /// while its stream is busy but quiet (and curl wants only to read: a socket it has something
  /// to send on, e.g. a new stream on an HTTP/2 connection whose send buffer was full, is armed
  /// now), or is watched again.
  void lookAtParked() {
    const auto now = std::chrono::steady_clock::now();
    std::optional<std::chrono::steady_clock::time_point> later;
    const auto due = pollParked([&](const Socket& sock) {
      if (sock.parkedUntil <= now) return true;
      later = later ? std::min(*later, sock.parkedUntil) : sock.parkedUntil;
      return false;
    });
    if (later) lookAtParkedAt(*later);
    if (due.empty()) return;
    ++stats.parkLooks;
    stats.parkedLookedAt += due.size();
    for (const Looked& l : due) {
      auto sock = stillParked(l);
      if (!sock) continue;
      sock->parked = false;
      const bool waiting = (sock->want & CURL_POLL_IN) && l.readable;
      if (!waiting && sock->want == CURL_POLL_IN && !requestInFlight() &&
          now - sock->lastRead < kBusyIntervals * options.readCoalesce) {
        parkUntilNextInterval(*sock, now);  // quiet for now: look again at the next interval
        continue;
      }
      if (waiting) {
        // The batch, read while the socket is still out of the reactor: onReady parks it again
        // or, if it is not to be parked, watches it (arm).
        onReady(l.fd, sock, CURL_CSELECT_IN, {});
      } else {
        arm(l.fd, sock);  // quiet for ten intervals (or end of stream): watched again
      }
    }
  }

  /// readHeldStreams: every parked socket curl reads from is looked at now (pollParked), before
  /// its park ends; one with data waiting, or an end of stream or error to read, is read as at
  /// its park's end (onReady parks it again, until the same interval's end, or watches it), the
  /// others stay parked as they were.
  size_t readParkedNow() {
    size_t read = 0;
    for (const Looked& l :
         pollParked([](const Socket& sock) { return (sock.want & CURL_POLL_IN) != 0; })) {
      if (!l.readable) continue;
      auto sock = stillParked(l);
      if (!sock) continue;
      sock->parked = false;
      ++stats.readEarly;
      ++read;
      onReady(l.fd, sock, CURL_CSELECT_IN, {});
    }
    return read;
  }

  static int onTimer(CURLM*, long timeoutMs, void* user) {
    auto* impl = static_cast<Impl*>(user);
    impl->timer.cancel();
    if (timeoutMs < 0) return 0;
    impl->timer.expires_after(std::chrono::milliseconds(timeoutMs));
    std::weak_ptr<Impl> weak = impl->weak_from_this();
    impl->timer.async_wait([weak](const boost::system::error_code& ec) {
      if (ec) return;
      auto self = weak.lock();
      if (!self || self->shuttingDown) return;
      int running = 0;
      curl_multi_socket_action(self->multi, CURL_SOCKET_TIMEOUT, 0, &running);
      self->processDone();
    });
    return 0;
  }

  void processDone() {
    std::vector<std::pair<CURL*, CURLcode>> done;
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg == CURLMSG_DONE) done.emplace_back(msg->easy_handle, msg->data.result);
    }
    for (auto [easy, code] : done) finish(easy, code);
  }

  void finish(CURL* easy, CURLcode code) {
    Transfer* raw = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &raw);
    if (raw == nullptr) return;
    auto it = transfers.find(raw->id);
    if (it == transfers.end() || it->second.get() != raw) return;
    std::unique_ptr<Transfer> t = std::move(it->second);
    transfers.erase(it);
    curl_multi_remove_handle(multi, t->easy);
    t->added = false;
    if (!t->headDone) {
      long status = 0;
      curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
      t->head.status = status;
    }
    curl_easy_cleanup(t->easy);
    t->easy = nullptr;
    if (t->cancelled) return;

    HttpResult result;
    result.head = t->head;
    result.body = std::move(t->body);
    if (code != CURLE_OK) {
      result.error = !t->ownError.empty() ? t->ownError
                     : t->errbuf[0] != '\0' ? std::string(t->errbuf)
                                            : std::string(curl_easy_strerror(code));
    }
    if (result.head.status == 401) credentials.invalidate(t->credentialGeneration);
    if (t->callbacks.onDone) t->callbacks.onDone(std::move(result));
  }
};

CurlTransport::CurlTransport(boost::asio::io_context& io, const Clock& clock,
                             const RestConfig& config, CredentialSource& credentials,
                             TransportOptions options)
    : impl_(std::make_shared<Impl>(io, clock, config, credentials, std::move(options))) {
  impl_->init();
}

CurlTransport::~CurlTransport() { impl_->shutdown(); }

KubeTransport::RequestId CurlTransport::start(HttpRequest request, RequestCallbacks callbacks) {
  return impl_->start(std::move(request), std::move(callbacks));
}

void CurlTransport::cancel(RequestId id) { impl_->cancel(id); }

const std::string& CurlTransport::server() const { return impl_->config.server; }

size_t CurlTransport::readHeldStreams() { return impl_->readParkedNow(); }

size_t CurlTransport::active() const { return impl_->transfers.size(); }

TransportStats CurlTransport::stats() const { return impl_->stats; }

}  // namespace firstwork::kube
