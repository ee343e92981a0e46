#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/core/result.hpp"
#include "firstwork/kube/kubeconfig.hpp"

namespace boost::asio {
class io_context;
}

namespace firstwork::kube {

/// What a request authenticates with. `generation` changes whenever the source hands out
/// something new, so a 401 can be matched to the credentials that caused it.
struct Credentials {
  std::string token;          // bearer token; empty = none
  std::string clientCertPem;  // from an exec plugin; overrides the kubeconfig's certificate
  std::string clientKeyPem;
  uint64_t generation = 0;
};

/// Supplies credentials for requests and refreshes them. Event-loop thread only.
class CredentialSource {
 public:
  using Callback = std::function<void(Result<Credentials>)>;
  virtual ~CredentialSource() = default;
  /// Current credentials, refreshed first when stale. `done` runs on the loop thread, possibly
  /// before acquire() returns.
  virtual void acquire(Callback done) = 0;
  /// The server rejected (401) a request made with credentials of `generation`: the next
  /// acquire() refreshes (re-reads the file, re-runs the plugin) unless that already happened.
  virtual void invalidate(uint64_t generation) = 0;
  /// For log lines; never contains a secret.
  virtual std::string describe() const = 0;
};

/// No credentials at all (anonymous), or a static token / static client certificate only.
/// Any thread.
class StaticCredentials final : public CredentialSource {
 public:
  explicit StaticCredentials(std::string token = {});
  // CredentialSource
  void acquire(Callback done) override;
  void invalidate(uint64_t) override {}
  std::string describe() const override;

 private:
  std::string token_;
};

/// Bearer token from a file (projected service-account token, kubeconfig tokenFile): re-read
/// when older than `refreshPeriod` (client-go: 1 min) and after a 401. A failed re-read keeps
/// the last good token (client-go behaviour); `fallbackToken` (the kubeconfig `token`) is used
/// only while the file has never been read successfully. Event-loop thread.
class TokenFileCredentials final : public CredentialSource {
 public:
  TokenFileCredentials(const Clock& clock, std::string path,
                       std::chrono::milliseconds refreshPeriod = std::chrono::minutes(1),
                       std::string fallbackToken = {});
  // CredentialSource
  void acquire(Callback done) override;
  void invalidate(uint64_t generation) override;
  std::string describe() const override;

  /// How often the file was read (tests).
  uint64_t reads() const { return reads_; }

 private:
  const Clock& clock_;
  std::string path_;
  std::chrono::milliseconds refreshPeriod_;
  std::string fallbackToken_;
  std::optional<Credentials> current_;
  std::optional<MonotonicTime> lastRead_;
  bool stale_ = false;
  uint64_t generation_ = 0;
  uint64_t reads_ = 0;
};

/// The cluster facts an exec plugin may receive (`provideClusterInfo: true`).
struct ExecClusterInfo {
  std::string server;
  std::string tlsServerName;
  bool insecureSkipTlsVerify = false;
  std::string caPem;  // sent base64-encoded as certificate-authority-data
  std::string proxyUrl;
  bool disableCompression = false;
};

struct ExecOptions {
  std::chrono::milliseconds timeout{30000};        // the plugin is killed after this
  std::chrono::milliseconds refreshBefore{10000};  // re-run this long before expirationTimestamp
  size_t maxOutputBytes = 1 << 20;
};

/// Credentials from a client-go exec plugin. The plugin is started with posix_spawn (no shell),
/// stdin /dev/null, stdout read asynchronously on the event loop (so the loop is never blocked
/// by the plugin; the kill timeout bounds a hung plugin), stderr inherited like client-go.
/// KUBERNETES_EXEC_INFO carries an ExecCredential with spec.interactive=false (and spec.cluster
/// when provideClusterInfo). The result is cached until shortly before its
/// expirationTimestamp (or until a 401 when it has none). Concurrent acquire() calls share one
/// run. Only the command name and exit status are logged, never the output. Event-loop thread.
class ExecCredentials final : public CredentialSource {
 public:
  ExecCredentials(boost::asio::io_context& io, const Clock& clock, ExecConfig config,
                  ExecClusterInfo cluster, ExecOptions options = {});
  ~ExecCredentials() override;
  ExecCredentials(const ExecCredentials&) = delete;
  ExecCredentials& operator=(const ExecCredentials&) = delete;

  // CredentialSource
  void acquire(Callback done) override;
  void invalidate(uint64_t generation) override;
  std::string describe() const override;

  /// How often the plugin was started (tests).
  uint64_t runs() const { return runs_; }
  /// The KUBERNETES_EXEC_INFO JSON the plugin receives.
  std::string execInfoJson() const;

 private:
  struct Run;
  void startRun();
  void readMore(const std::shared_ptr<Run>& run);
  void reap(const std::shared_ptr<Run>& run);
  void finishRun(Result<Credentials> result, std::optional<SystemTime> expiry);

  boost::asio::io_context& io_;
  const Clock& clock_;
  ExecConfig config_;
  ExecClusterInfo cluster_;
  ExecOptions options_;
  std::optional<Credentials> current_;
  std::optional<SystemTime> expiry_;
  bool stale_ = false;
  uint64_t generation_ = 0;
  uint64_t runs_ = 0;
  std::vector<Callback> waiting_;
  std::shared_ptr<Run> run_;
  std::shared_ptr<bool> alive_;
};

/// Parses a plugin's stdout: an ExecCredential of `apiVersion` with status.token or
/// status.clientCertificateData + clientKeyData, and an optional expirationTimestamp.
struct ParsedExecCredential {
  std::string token;
  std::string clientCertPem;
  std::string clientKeyPem;
  std::optional<SystemTime> expiry;
};
Result<ParsedExecCredential> parseExecCredential(std::string_view json,
                                                 const std::string& apiVersion);

struct CredentialOptions {
  std::chrono::milliseconds tokenFileRefresh = std::chrono::minutes(1);
  ExecOptions exec;
};

/// The source for a RestConfig, by client-go's precedence: tokenFile (with `token` as the
/// fallback), else token, else exec (only when no static client certificate is configured),
/// else anonymous / certificate-only.
std::unique_ptr<CredentialSource> makeCredentialSource(boost::asio::io_context& io,
                                                       const Clock& clock,
                                                       const RestConfig& config,
                                                       const CredentialOptions& options = {});

}  // namespace firstwork::kube
