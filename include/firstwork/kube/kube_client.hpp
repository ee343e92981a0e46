#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/kube/api_discovery.hpp"
#include "firstwork/kube/connection_monitor.hpp"
#include "firstwork/kube/credentials.hpp"
#include "firstwork/kube/curl_transport.hpp"
#include "firstwork/kube/kube_transport.hpp"
#include "firstwork/kube/kubeconfig.hpp"
#include "firstwork/kube/observer.hpp"
#include "firstwork/kube/reflector.hpp"
#include "firstwork/model/object.hpp"

namespace boost::asio {
class io_context;
}

namespace firstwork::kube {

struct KubeClientOptions {
  TransportOptions transport;
  CredentialOptions credentials;
  ReflectorOptions reflector;  // defaults for addReflector()
  std::chrono::milliseconds discoveryCacheTtl{std::chrono::minutes(5)};
  /// Where the reflectors' LIST pages are decoded (shared by the clients; outlives them). None:
  /// on the event loop.
  ListDecoder* listDecoder = nullptr;
};

/// Everything the daemon needs for one cluster: credentials, the curl transport, API
/// discovery, the connection monitor (the `probe` view) and one Reflector per watched
/// resource, all driven by the daemon's io_context. Event-loop thread only (construct and add
/// reflectors before io_context::run() or on the loop).
class KubeClient {
 public:
  KubeClient(boost::asio::io_context& io, const Clock& clock, std::string clusterName,
             RestConfig config, KubeClientOptions options = {}, KubeObserver* observer = nullptr);
  /// With a transport of the caller's (tests: FakeTransport); `config` is informational.
  KubeClient(boost::asio::io_context& io, const Clock& clock, std::string clusterName,
             std::unique_ptr<KubeTransport> transport, KubeClientOptions options = {},
             KubeObserver* observer = nullptr);
  ~KubeClient();
  KubeClient(const KubeClient&) = delete;
  KubeClient& operator=(const KubeClient&) = delete;

  /// Adds a reflector for `kind` delivering to `sink` (which must outlive the client).
  Reflector& addReflector(model::Kind kind, EventSink& sink);
  Reflector& addReflector(model::Kind kind, EventSink& sink, ReflectorOptions options);

  /// Starts every reflector (and logs the insecure-TLS warning once).
  void start();
  void stop();

  /// Every reflector synced or unavailable (for /readyz).
  bool settled() const;
  const std::string& name() const { return name_; }
  const RestConfig& config() const { return config_; }
  /// insecure-skip-tls-verify is set: the daemon warns and counts it.
  bool insecure() const { return config_.insecureSkipTlsVerify; }
  ConnectionMonitor& connection() { return *monitor_; }
  KubeTransport& transport() { return *transport_; }
  CredentialSource* credentials() { return credentials_.get(); }
  const std::vector<std::unique_ptr<Reflector>>& reflectors() const { return reflectors_; }
  Reflector* reflector(model::Kind kind) const;

 private:
  boost::asio::io_context& io_;
  const Clock& clock_;
  std::string name_;
  RestConfig config_;
  KubeClientOptions options_;
  KubeObserver* observer_;
  std::unique_ptr<CredentialSource> credentials_;
  std::unique_ptr<KubeTransport> transport_;
  std::unique_ptr<ConnectionMonitor> monitor_;
  std::unique_ptr<ApiDiscovery> discovery_;
  std::vector<std::unique_ptr<Reflector>> reflectors_;
};

}  // namespace firstwork::kube
