#include "firstwork/http/http_server.hpp"

#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include <fmt/format.h>

#include "firstwork/config/listen_address.hpp"
#include "firstwork/core/thread_name.hpp"
#include "firstwork/http/httplib.hpp"
#include "firstwork/log/log.hpp"
#include "firstwork/log/redact.hpp"
#include "firstwork/log/throttle.hpp"

namespace firstwork::http {
namespace {

constexpr const char* kJson = "application/json; charset=utf-8";
constexpr const char* kText = "text/plain; charset=utf-8";
constexpr const char* kExposition = "text/plain; version=0.0.4; charset=utf-8";
constexpr size_t kMaxReadinessLines = 50;

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
}

// The API token, from a file that may be rotated (a mounted Secret) or inline. Fails closed: once
// a token file is configured, an unreadable or empty file refuses every request.
class TokenSource {
 public:
  Status init(const std::string& file, const std::string& inline_token) {
    file_ = file;
    if (file_.empty()) {
      token_ = trim(inline_token);
      if (!token_.empty()) log::SecretScrubber::global().addSecret(token_);
      return Ok{};
    }
    std::lock_guard lock(mu_);
    if (!reloadLocked()) {
      return makeError(fmt::format("cannot use API token file \"{}\": unreadable or empty", file_));
    }
    return Ok{};
  }

  bool required() const { return !file_.empty() || !token_.empty(); }

  // Whether `authorization` (the header value) carries the current token.
  bool authorize(std::string_view authorization, MonotonicTime now) {
    std::string expected;
    {
      std::lock_guard lock(mu_);
      if (!file_.empty() && (!checked_ || now - last_check_ >= std::chrono::seconds(1))) {
        checked_ = true;
        last_check_ = now;
        struct stat st {};
        if (::stat(file_.c_str(), &st) != 0) {
          token_.clear();
          mtime_ns_ = -1;
        } else {
          int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                          st.st_mtim.tv_nsec;
          if (mtime != mtime_ns_ || st.st_size != size_) reloadLocked();
        }
      }
      expected = token_;
    }
    if (expected.empty()) return false;
    constexpr std::string_view kScheme = "bearer ";
    if (authorization.size() <= kScheme.size()) return false;
    for (size_t i = 0; i < kScheme.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return false;
    }
    std::string presented = trim(std::string(authorization.substr(kScheme.size())));
    // Constant-time comparison: response timing must not reveal how many leading bytes matched.
    return presented.size() == expected.size() &&
           CRYPTO_memcmp(presented.data(), expected.data(), expected.size()) == 0;
  }

 private:
  bool reloadLocked() {
    struct stat st {};
    if (::stat(file_.c_str(), &st) == 0) {
      mtime_ns_ = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
      size_ = st.st_size;
    }
    std::ifstream in(file_, std::ios::binary);
    std::stringstream ss;
    if (in) ss << in.rdbuf();
    token_ = in ? trim(ss.str()) : std::string();
    if (!token_.empty()) log::SecretScrubber::global().addSecret(token_);
    return !token_.empty();
  }

  std::mutex mu_;
  std::string file_;
  std::string token_;
  int64_t mtime_ns_ = -1;
  off_t size_ = -1;
  bool checked_ = false;
  MonotonicTime last_check_{};
};

std::string jsonError(std::string_view message) {
  nlohmann::json body{{"error", std::string(message)}};
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::optional<std::string> ApiRequest::param(const std::string& name) const {
  auto it = params.find(name);
  if (it == params.end()) return std::nullopt;
  return it->second;
}

ApiResponse ApiResponse::json(std::string body, int status) {
  return ApiResponse{status, std::move(body)};
}

ApiResponse ApiResponse::error(int status, std::string_view message) {
  return ApiResponse{status, jsonError(message)};
}

struct HttpServer::Impl {
  Impl(HttpServerOptions o, MetricsSnapshot& m, const Clock& c)
      : options(std::move(o)), metrics(m), clock(c) {}

  HttpServerOptions options;
  MetricsSnapshot& metrics;
  const Clock& clock;
  std::map<std::string, ApiHandler> exact;
  std::map<std::string, ApiHandler> prefixes;
  ReadinessCheck readiness;
  TokenSource token;
  config::ListenAddress address;
  bool tls = false;
  std::unique_ptr<httplib::Server> server;
  std::thread thread;
  std::atomic<int64_t> heartbeat_ns{0};
  log::Logger logger{"http"};
  log::LogThrottle auth_log{std::chrono::minutes(1)};
  log::LogThrottle error_log{std::chrono::seconds(10)};

  void handleMetrics(httplib::Response& res) {
    auto text = metrics.scrape();
    res.set_content(*text, kExposition);
  }

  void handleHealth(httplib::Response& res) {
    auto now = clock.monotonicNow().time_since_epoch();
    auto age = MonotonicTime::duration(now.count() - heartbeat_ns.load());
    if (age <= options.heartbeatTimeout) {
      res.set_content("ok\n", kText);
      return;
    }
    res.status = 503;
    res.set_content(fmt::format("event loop heartbeat {:.1f}s old (limit {:.1f}s)\n",
                                toSeconds(age), toSeconds(options.heartbeatTimeout)),
                    kText);
  }

  void handleReady(httplib::Response& res) {
    std::vector<std::string> waiting;
    if (readiness) {
      try {
        waiting = readiness();
      } catch (const std::exception& e) {
        waiting = {fmt::format("readiness check failed: {}", e.what())};
      } catch (...) {
        waiting = {"readiness check failed"};
      }
    }
    if (waiting.empty()) {
      res.set_content("ok\n", kText);
      return;
    }
    std::string body = "not ready:\n";
    for (size_t i = 0; i < waiting.size() && i < kMaxReadinessLines; ++i) {
      body += fmt::format("- {}\n", waiting[i]);
    }
    if (waiting.size() > kMaxReadinessLines) {
      body += fmt::format("... and {} more\n", waiting.size() - kMaxReadinessLines);
    }
    res.status = 503;
    res.set_content(body, kText);
  }

  bool authorized(const httplib::Request& req, httplib::Response& res) {
    if (!token.required()) return true;
    if (token.authorize(req.get_header_value("Authorization"), clock.monotonicNow())) return true;
    res.status = 401;
    res.set_header("WWW-Authenticate", "Bearer realm=\"firstwork\"");
    res.set_content(jsonError("unauthorized: send Authorization: Bearer <token>"), kJson);
    uint64_t suppressed = 0;
    if (auth_log.allow(clock.monotonicNow(), &suppressed)) {
      logger.warn("API request refused: missing or wrong bearer token",
                  {{"path", req.path}, {"remote", req.remote_addr}, {"suppressed", suppressed}});
    }
    return false;
  }

  void handleApi(const httplib::Request& req, httplib::Response& res, const std::string& path) {
    if (!authorized(req, res)) return;
    res.set_header("Cache-Control", "no-store");
    if (path.empty()) {  // GET /api/v1/ lists the routes, for people exploring with curl
      nlohmann::json routes = nlohmann::json::array();
      for (const auto& [p, h] : exact) routes.push_back("/api/v1/" + p);
      for (const auto& [p, h] : prefixes) routes.push_back("/api/v1/" + p + "...");
      res.set_content(nlohmann::json{{"routes", routes}}.dump(), kJson);
      return;
    }
    ApiRequest request;
    request.path = path;
    for (const auto& [k, v] : req.params) request.params.emplace(k, v);
    const ApiHandler* handler = nullptr;
    if (auto it = exact.find(path); it != exact.end()) {
      handler = &it->second;
    } else {
      size_t best = 0;
      for (const auto& [prefix, h] : prefixes) {
        if (path.size() > prefix.size() && path.compare(0, prefix.size(), prefix) == 0 &&
            prefix.size() > best) {
          best = prefix.size();
          handler = &h;
          request.rest = path.substr(prefix.size());
        }
      }
    }
    if (handler == nullptr) {
      res.status = 404;
      res.set_content(jsonError(fmt::format("no such API path: /api/v1/{}", path)), kJson);
      return;
    }
    ApiResponse response;
    try {
      response = (*handler)(request);
    } catch (const std::exception& e) {
      logError(req, e.what());
      response = ApiResponse::error(500, "internal error");
    } catch (...) {
      logError(req, "unknown exception");
      response = ApiResponse::error(500, "internal error");
    }
    res.status = response.status;
    res.set_content(response.body, kJson);
  }

  void logError(const httplib::Request& req, std::string_view what) {
    uint64_t suppressed = 0;
    if (error_log.allow(clock.monotonicNow(), &suppressed)) {
      logger.error("HTTP handler failed",
                   {{"path", req.path}, {"error", what}, {"suppressed", suppressed}});
    }
  }

  void registerRoutes() {
    httplib::Server& s = *server;
    // Every handler catches everything: an exception must never unwind into httplib's worker.
    auto guarded = [this](auto fn) {
      return [this, fn](const httplib::Request& req, httplib::Response& res) {
        try {
          fn(req, res);
        } catch (const std::exception& e) {
          logError(req, e.what());
          res.status = 500;
          res.set_content("internal error\n", kText);
        } catch (...) {
          logError(req, "unknown exception");
          res.status = 500;
          res.set_content("internal error\n", kText);
        }
      };
    };
    s.Get("/metrics", guarded([this](const auto&, auto& res) { handleMetrics(res); }));
    s.Get("/healthz", guarded([this](const auto&, auto& res) { handleHealth(res); }));
    s.Get("/readyz", guarded([this](const auto&, auto& res) { handleReady(res); }));
    s.Get("/api/v1", guarded([this](const auto& req, auto& res) { handleApi(req, res, ""); }));
    s.Get(R"(/api/v1/(.*))", guarded([this](const httplib::Request& req, auto& res) {
            handleApi(req, res, req.matches[1].str());
          }));
    s.Get(".*", guarded([](const auto&, auto& res) {
            res.status = 404;
            res.set_content("not found\n", kText);
          }));
    auto not_allowed = guarded([](const httplib::Request& req, httplib::Response& res) {
      res.status = 405;
      res.set_header("Allow", "GET, HEAD");
      if (req.path.rfind("/api/", 0) == 0) {
        res.set_content(jsonError("method not allowed"), kJson);
      } else {
        res.set_content("method not allowed\n", kText);
      }
    });
    s.Post(".*", not_allowed);
    s.Put(".*", not_allowed);
    s.Patch(".*", not_allowed);
    s.Delete(".*", not_allowed);
    s.Options(".*", not_allowed);
    s.set_exception_handler([this](const httplib::Request& req, httplib::Response& res,
                                   std::exception_ptr) {
      logError(req, "exception escaped a handler");
      res.status = 500;
      res.set_content("internal error\n", kText);
    });
    s.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      if (logger.enabled(log::Level::Debug)) {
        logger.debug("http request",
                     {{"method", req.method}, {"path", req.path}, {"status", res.status}});
      }
    });
  }
};

HttpServer::HttpServer(HttpServerOptions options, MetricsSnapshot& metrics, const Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(options), metrics, clock)) {}

HttpServer::~HttpServer() { stop(); }

void HttpServer::addApiRoute(std::string path, ApiHandler handler) {
  while (!path.empty() && path.front() == '/') path.erase(0, 1);
  if (!path.empty() && path.back() == '/') {
    impl_->prefixes[path] = std::move(handler);
  } else {
    impl_->exact[path] = std::move(handler);
  }
}

void HttpServer::setReadinessCheck(ReadinessCheck check) { impl_->readiness = std::move(check); }

Status HttpServer::start() {
  Impl& s = *impl_;
  if (s.server) return makeError("HTTP server already started");
  auto address = config::parseListenAddress(s.options.listen);
  if (!address.ok()) return makeError(address.error());
  s.address = *address;
  if (s.options.tlsCertFile.empty() != s.options.tlsKeyFile.empty()) {
    return makeError("TLS needs both a certificate and a key file");
  }
  if (auto st = s.token.init(s.options.apiBearerTokenFile, s.options.apiBearerToken); !st.ok()) {
    return st;
  }
  s.tls = !s.options.tlsCertFile.empty();
  if (s.tls) {
    auto ssl = std::make_unique<httplib::SSLServer>(s.options.tlsCertFile.c_str(),
                                                    s.options.tlsKeyFile.c_str());
    if (!ssl->is_valid()) {
      return makeError(fmt::format("cannot load TLS certificate \"{}\" with key \"{}\"",
                                   s.options.tlsCertFile, s.options.tlsKeyFile));
    }
    SSL_CTX_set_min_proto_version(ssl->ssl_context(), TLS1_2_VERSION);
    s.server = std::move(ssl);
  } else {
    s.server = std::make_unique<httplib::Server>();
  }
  size_t threads = std::max<size_t>(1, s.options.threads);
  s.server->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.server->set_read_timeout(s.options.readTimeout);
  s.server->set_write_timeout(s.options.writeTimeout);
  s.server->set_payload_max_length(64 * 1024);  // GET only: no request needs a body
  // httplib's default also sets SO_REUSEPORT, which lets a second daemon bind the same port and
  // silently share its traffic; a taken port must be a start error instead. SO_REUSEADDR alone
  // still allows an immediate restart over TIME_WAIT connections.
  s.server->set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  s.registerRoutes();
  s.heartbeat_ns = s.clock.monotonicNow().time_since_epoch().count();

  errno = 0;
  int bound = -1;
  if (s.address.port == 0) {
    bound = s.server->bind_to_any_port(s.address.host);
  } else if (s.server->bind_to_port(s.address.host, s.address.port)) {
    bound = s.address.port;
  }
  if (bound <= 0) {
    int err = errno;
    s.server.reset();
    return makeError(fmt::format("cannot listen on {}{}", s.address.toString(),
                                 err != 0 ? fmt::format(": {}", std::strerror(err)) : ""));
  }
  port_ = static_cast<uint16_t>(bound);
  s.thread = std::thread([&s] {
    nameThisThread("fw-http");  // before the pool's threads start: they take its name
    s.server->listen_after_bind();
  });
  // httplib's stop() is a no-op until the accept loop runs, so wait for it: stop() right after
  // start() must not leave the thread listening forever.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!s.server->is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!s.server->is_running()) {
    s.server->stop();
    s.thread.detach();  // cannot join a thread stuck before its loop; leak rather than hang
    return makeError("HTTP server did not start serving within 10 s");
  }
  s.logger.info("HTTP server listening",
                {{"address", fmt::format("{}:{}", s.address.isIpv6() ? "[" + s.address.host + "]"
                                                                    : s.address.host,
                                         bound)},
                 {"tls", s.tls},
                 {"api_auth", s.token.required()}});
  return Ok{};
}

void HttpServer::stop() {
  Impl& s = *impl_;
  if (!s.server) return;
  if (s.thread.joinable()) {
    s.server->stop();
    s.thread.join();
  }
  s.server.reset();
  port_ = 0;
}

bool HttpServer::running() const { return impl_->server && impl_->server->is_running(); }

std::string HttpServer::baseUrl() const {
  std::string host = impl_->address.host;
  if (host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return fmt::format("{}://{}:{}", impl_->tls ? "https" : "http", host, port_.load());
}

void HttpServer::heartbeat() {
  impl_->heartbeat_ns = impl_->clock.monotonicNow().time_since_epoch().count();
}

}  // namespace firstwork::http
