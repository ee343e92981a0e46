#include "firstwork/kube/api_discovery.hpp"

#include <simdjson.h>

#include <algorithm>

#include "detail/util.hpp"
#include "firstwork/kube/connection_monitor.hpp"

namespace firstwork::kube {

namespace {

// APIGroup: {"kind":"APIGroup","name":"kueue.x-k8s.io","versions":[{"version":"v1beta2",...}]}
bool parseGroup(const std::string& body, std::vector<std::string>& versions) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(body);
  simdjson::dom::element doc;
  if (parser.parse(padded).get(doc) != simdjson::SUCCESS) return false;
  simdjson::dom::array list;
  if (doc["versions"].get_array().get(list) != simdjson::SUCCESS) return false;
  for (simdjson::dom::element v : list) {
    std::string_view version;
    if (v["version"].get_string().get(version) == simdjson::SUCCESS && !version.empty()) {
      versions.emplace_back(version);
    }
  }
  return true;
}

}  // namespace

ApiDiscovery::ApiDiscovery(KubeTransport& transport, const Clock& clock,
                           std::chrono::milliseconds cacheTtl, ConnectionMonitor* monitor)
    : transport_(transport), clock_(clock), cacheTtl_(cacheTtl), monitor_(monitor) {}

ApiDiscovery::~ApiDiscovery() {
  for (auto& [group, e] : groups_) {
    if (e.inFlight) transport_.cancel(e.request);
  }
}

void ApiDiscovery::lookup(const std::string& group, bool refresh, Callback done) {
  Entry& e = groups_[group];
  if (!refresh && e.info && e.info->outcome != GroupInfo::Outcome::Failed &&
      clock_.monotonicNow() - e.fetchedAt < cacheTtl_) {
    done(*e.info);
    return;
  }
  e.waiting.push_back(std::move(done));
  if (e.inFlight) return;
  e.inFlight = true;
  RequestCallbacks cb;
  cb.onDone = [this, group](HttpResult r) { finish(group, std::move(r)); };
  e.request = transport_.start(HttpRequest{"/apis/" + group, false}, std::move(cb));
}

void ApiDiscovery::finish(const std::string& group, HttpResult result) {
  Entry& e = groups_[group];
  e.inFlight = false;
  if (monitor_) {
    if (result.head.status != 0) {
      monitor_->onResponse(result.head);
    } else if (!result.credentialsFailed) {
      monitor_->onUnreachable(result.error);
    }
  }
  GroupInfo info;
  if (result.head.status == 200 && result.error.empty() && parseGroup(result.body, info.versions)) {
    info.outcome = GroupInfo::Outcome::Served;
  } else if (result.head.status == 404 && result.error.empty()) {
    info.outcome = GroupInfo::Outcome::NotServed;
  } else {
    info.outcome = GroupInfo::Outcome::Failed;
    if (result.head.status == 200 && result.error.empty()) {
      result.error = "discovery response for " + group + " is not an APIGroup";
    }
    info.failure = std::move(result);
  }
  e.info = info;
  e.fetchedAt = clock_.monotonicNow();
  std::vector<Callback> waiting;
  waiting.swap(e.waiting);
  for (auto& cb : waiting) cb(info);
}

std::optional<std::string> chooseVersion(const std::vector<std::string>& served,
                                         const std::vector<std::string>& preferred) {
  for (const auto& p : preferred) {
    if (p.empty()) continue;
    if (std::find(served.begin(), served.end(), p) != served.end()) return p;
  }
  return std::nullopt;
}

}  // namespace firstwork::kube
