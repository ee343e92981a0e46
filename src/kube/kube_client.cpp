#include "firstwork/kube/kube_client.hpp"

#include "detail/log.hpp"

namespace firstwork::kube {

KubeClient::KubeClient(boost::asio::io_context& io, const Clock& clock, std::string clusterName,
                       RestConfig config, KubeClientOptions options, KubeObserver* observer)
    : io_(io),
      clock_(clock),
      name_(std::move(clusterName)),
      config_(std::move(config)),
      options_(std::move(options)),
      observer_(observer) {
  credentials_ = makeCredentialSource(io_, clock_, config_, options_.credentials);
  transport_ = std::make_unique<CurlTransport>(io_, clock_, config_, *credentials_,
                                               options_.transport);
  monitor_ = std::make_unique<ConnectionMonitor>(clock_, name_, observer_);
  discovery_ = std::make_unique<ApiDiscovery>(*transport_, clock_, options_.discoveryCacheTtl,
                                              monitor_.get());
}

KubeClient::KubeClient(boost::asio::io_context& io, const Clock& clock, std::string clusterName,
                       std::unique_ptr<KubeTransport> transport, KubeClientOptions options,
                       KubeObserver* observer)
    : io_(io),
      clock_(clock),
      name_(std::move(clusterName)),
      options_(std::move(options)),
      observer_(observer),
      transport_(std::move(transport)) {
  config_.server = transport_->server();
  config_.source = "custom transport";
  monitor_ = std::make_unique<ConnectionMonitor>(clock_, name_, observer_);
  discovery_ = std::make_unique<ApiDiscovery>(*transport_, clock_, options_.discoveryCacheTtl,
                                              monitor_.get());
}

KubeClient::~KubeClient() {
  // Reflectors cancel their requests, then discovery, then the transport goes.
  reflectors_.clear();
  discovery_.reset();
}

Reflector& KubeClient::addReflector(model::Kind kind, EventSink& sink) {
  return addReflector(kind, sink, options_.reflector);
}

Reflector& KubeClient::addReflector(model::Kind kind, EventSink& sink, ReflectorOptions options) {
  // Distinct seeds so reflectors of one cluster do not pick identical jitter / timeouts.
  if (options.seed != 0) options.seed += reflectors_.size() * 7919;
  Reflector::Context ctx;
  ctx.cluster = name_;
  ctx.transport = transport_.get();
  ctx.discovery = discovery_.get();
  ctx.monitor = monitor_.get();
  ctx.observer = observer_;
  ctx.decoder = options_.listDecoder;
  reflectors_.push_back(std::make_unique<Reflector>(io_, clock_, std::move(ctx), kind, sink,
                                                    options));
  return *reflectors_.back();
}

void KubeClient::start() {
  if (config_.insecureSkipTlsVerify) {
    detail::logger()->warn(
        "TLS verification disabled by insecure-skip-tls-verify cluster={} server={}", name_,
        config_.server);
  }
  detail::logger()->info("cluster starting cluster={} server={} auth=\"{}\" resources={}", name_,
                         config_.server, credentials_ ? credentials_->describe() : "custom",
                         reflectors_.size());
  for (auto& r : reflectors_) r->start();
}

void KubeClient::stop() {
  for (auto& r : reflectors_) r->stop();
}

bool KubeClient::settled() const {
  for (const auto& r : reflectors_) {
    if (!r->settled()) return false;
  }
  return true;
}

Reflector* KubeClient::reflector(model::Kind kind) const {
  for (const auto& r : reflectors_) {
    if (r->kind() == kind) return r.get();
  }
  return nullptr;
}

}  // namespace firstwork::kube
