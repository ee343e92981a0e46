#pragma once
// One Kubernetes API test server, a kubeconfig for it and a KubeClient watching it, for the tests
// that run reflectors against the real server (kube_client_test, hostile_watch_test).
#include <boost/asio/io_context.hpp>

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "converge.hpp"
#include "firstwork/core/clock.hpp"
#include "firstwork/kube/kube_client.hpp"
#include "firstwork/kube/kubeconfig.hpp"
#include "firstwork/sim/api_server.hpp"
#include "kube_test_util.hpp"
#include "recording.hpp"

namespace firstwork::testing {

using namespace std::chrono_literals;

inline sim::ApiServerOptions serverOptions(bool tls) {
  sim::ApiServerOptions o;
  o.tls = tls;
  o.bookmarkInterval = 100ms;
  o.tooLargeResourceVersionWait = 100ms;
  o.name = tls ? "https" : "http";
  return o;
}

/// One API server, a kubeconfig for it, and a KubeClient with a pods reflector.
struct SimFixture {
  explicit SimFixture(bool tls, kube::KubeClientOptions options = fastOptions(), bool tokenFile = false)
      : server(serverOptions(tls)) {
    server.start();
    kubeconfigPath = dir.write("kubeconfig", server.kubeconfig("test"));
    kube::KubeconfigOptions ko;
    ko.explicitPath = kubeconfigPath;
    auto rc = kube::loadKubeconfig(ko);
    REQUIRE(rc.ok());
    config = *rc;
    if (tokenFile) {
      config.token.clear();
      config.tokenFile = dir.write("token", server.token());
    }
    client = std::make_unique<kube::KubeClient>(io, clock, "c1", config, options, &observer);
  }

  kube::Reflector& addPods() { return client->addReflector(model::Kind::Pod, sink); }

  void createPods(int n, const std::string& prefix = "p") {
    for (int i = 0; i < n; ++i) server.create("pods", podJson(prefix + "-" + std::to_string(i), 0));
  }

  /// Both the sink's view and the reflector's store equal the server's set.
  bool converged(const kube::Reflector& r, const std::string& resource = "pods") {
    auto want = serverSet(server, resource);
    return storeSet(r) == want && sink.mirror == want;
  }

  void requireConverged(const kube::Reflector& r, std::chrono::milliseconds timeout = 20000ms) {
    bool ok = runUntil(io, [&] { return converged(r); }, timeout);
    if (!ok) {
      auto want = serverSet(server, "pods");
      auto have = storeSet(r);
      size_t missing = 0, extra = 0, stale = 0;
      for (const auto& [uid, rv] : want) {
        auto it = have.find(uid);
        if (it == have.end()) ++missing;
        else if (it->second != rv) ++stale;
      }
      for (const auto& [uid, rv] : have) extra += want.count(uid) ? 0 : 1;
      FAIL("not converged: server=" << want.size() << " client=" << have.size() << " missing="
                                    << missing << " extra=" << extra << " stale=" << stale
                                    << " state=" << kube::reflectorStateName(r.state()));
    }
  }

  TempDir dir;
  sim::ApiServer server;
  std::string kubeconfigPath;
  kube::RestConfig config;
  boost::asio::io_context io;
  RealClock clock;
  RecordingObserver observer;
  RecordingSink sink;
  std::unique_ptr<kube::KubeClient> client;
};

}  // namespace firstwork::testing
