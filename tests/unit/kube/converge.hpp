#pragma once
// Shared by the tests that run reflectors against the real Kubernetes API test server: pod
// objects to create, and the uid → resourceVersion sets whose equality means "converged".
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "firstwork/kube/kube_client.hpp"
#include "firstwork/sim/api_server.hpp"

namespace firstwork::testing {

using UidRv = std::map<std::string, std::string>;

/// A running pod; `generation` goes into an annotation so an update changes the object.
inline std::string podJson(const std::string& name, int generation) {
  nlohmann::json j = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", "team-a"},
        {"labels", {{"app", "trainer"}}},
        {"annotations", {{"firstwork.dev/generation", std::to_string(generation)}}}}},
      {"spec", {{"nodeName", "node-1"}, {"containers", {{{"name", "main"}, {"image", "x"}}}}}},
      {"status", {{"phase", "Running"}}}};
  return j.dump();
}

/// uid → resourceVersion of what the server holds (its identities: no object is parsed, so a
/// loop may ask at every turn).
inline UidRv serverSet(const sim::ApiServer& server, const std::string& resource) {
  UidRv out;
  for (auto& [uid, rv] : server.identities(resource)) out.emplace(std::move(uid), std::move(rv));
  return out;
}

/// uid → resourceVersion of what a reflector holds.
inline UidRv storeSet(const kube::Reflector& r) {
  UidRv out;
  r.forEach([&](const model::Object& o) {
    const auto& m = model::metaOf(o);
    out[m.uid.str()] = m.resourceVersion.str();
  });
  return out;
}

/// Short timings, so faults are recovered from within a test's patience.
inline kube::KubeClientOptions fastOptions() {
  using namespace std::chrono_literals;
  kube::KubeClientOptions o;
  o.reflector.backoff.initial = 20ms;
  o.reflector.backoff.max = 200ms;
  o.reflector.stallTimeout = 700ms;  // the server sends a bookmark every 100 ms
  o.reflector.seed = 7;
  o.transport.connectTimeout = 2000ms;
  o.transport.requestTimeout = 20000ms;
  return o;
}

}  // namespace firstwork::testing
