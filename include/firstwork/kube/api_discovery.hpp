#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/kube/kube_transport.hpp"

namespace firstwork::kube {

class ConnectionMonitor;

/// Which versions the server serves for an API group (`GET /apis/<group>`), cached per group
/// and shared by the reflectors of one cluster; concurrent lookups share one request.
/// Event-loop thread.
class ApiDiscovery {
 public:
  struct GroupInfo {
    enum class Outcome : uint8_t { Served, NotServed, Failed };
    Outcome outcome = Outcome::Failed;
    std::vector<std::string> versions;  // served versions (Served)
    HttpResult failure;                 // what went wrong (Failed)
  };
  using Callback = std::function<void(const GroupInfo&)>;

  ApiDiscovery(KubeTransport& transport, const Clock& clock,
               std::chrono::milliseconds cacheTtl = std::chrono::minutes(5),
               ConnectionMonitor* monitor = nullptr);
  ~ApiDiscovery();
  ApiDiscovery(const ApiDiscovery&) = delete;
  ApiDiscovery& operator=(const ApiDiscovery&) = delete;

  /// Looks `group` up; a cached answer younger than the TTL is used unless `refresh`. `done`
  /// may run before lookup() returns (cached answer).
  void lookup(const std::string& group, bool refresh, Callback done);

 private:
  struct Entry {
    std::optional<GroupInfo> info;
    MonotonicTime fetchedAt{};
    bool inFlight = false;
    KubeTransport::RequestId request = 0;
    std::vector<Callback> waiting;
  };
  void finish(const std::string& group, HttpResult result);

  KubeTransport& transport_;
  const Clock& clock_;
  std::chrono::milliseconds cacheTtl_;
  ConnectionMonitor* monitor_;
  std::map<std::string, Entry> groups_;
};

/// Picks the first of `preferred` (best first; empty entries ignored) that `served` contains.
std::optional<std::string> chooseVersion(const std::vector<std::string>& served,
                                         const std::vector<std::string>& preferred);

}  // namespace firstwork::kube
