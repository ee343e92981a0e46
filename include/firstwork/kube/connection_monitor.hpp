#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "firstwork/core/clock.hpp"
#include "firstwork/kube/kube_transport.hpp"
#include "firstwork/kube/observer.hpp"

namespace firstwork::kube {

/// The daemon's own view of whether it can reach one cluster (design §3 source `probe`), fed by
/// every request of that cluster's reflectors. Connected on any HTTP answer below 500;
/// disconnected when a request gets no answer at all (connect/TLS failure, timeout) or a watch
/// stalls. A stream that is cut after it was answered is not by itself a disconnection: the
/// reconnect attempt right after tells. Also reports clock skew from `Date`. Loop thread.
class ConnectionMonitor {
 public:
  ConnectionMonitor(const Clock& clock, std::string cluster, KubeObserver* observer = nullptr);

  void onResponse(const ResponseHead& head);
  void onBytes();
  void onUnreachable(std::string_view detail);

  /// nullopt until the first outcome.
  std::optional<bool> connected() const { return connected_; }
  /// Every transition so far, oldest first (bounded to the last 64).
  const std::vector<ConnectionEvent>& history() const { return history_; }
  void addListener(std::function<void(const ConnectionEvent&)> listener);

 private:
  void transition(bool connected, std::string detail);

  const Clock& clock_;
  std::string cluster_;
  KubeObserver* observer_;
  std::optional<bool> connected_;
  SystemTime lastContact_{};
  std::vector<ConnectionEvent> history_;
  std::vector<std::function<void(const ConnectionEvent&)>> listeners_;
};

}  // namespace firstwork::kube
