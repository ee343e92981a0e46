#include "firstwork/kube/connection_monitor.hpp"

#include "detail/log.hpp"

namespace firstwork::kube {

ConnectionMonitor::ConnectionMonitor(const Clock& clock, std::string cluster,
                                     KubeObserver* observer)
    : clock_(clock), cluster_(std::move(cluster)), observer_(observer) {}

void ConnectionMonitor::onResponse(const ResponseHead& head) {
  if (head.status == 0) return;
  SystemTime now = clock_.systemNow();
  if (head.date && observer_) {
    observer_->onClockSkew(cluster_, toSeconds(*head.date - now));
  }
  if (head.status >= 500) return;  // reachable, but the answer may come from a proxy
  lastContact_ = now;
  if (connected_ != true) transition(true, "HTTP " + std::to_string(head.status));
}

void ConnectionMonitor::onBytes() { lastContact_ = clock_.systemNow(); }

void ConnectionMonitor::onUnreachable(std::string_view detail) {
  if (connected_ != false) transition(false, std::string(detail));
}

void ConnectionMonitor::addListener(std::function<void(const ConnectionEvent&)> listener) {
  listeners_.push_back(std::move(listener));
}

void ConnectionMonitor::transition(bool connected, std::string detail) {
  connected_ = connected;
  ConnectionEvent ev;
  ev.connected = connected;
  ev.at = clock_.systemNow();
  ev.lastContact = lastContact_ == SystemTime{} ? ev.at : lastContact_;
  ev.detail = std::move(detail);
  if (connected) {
    detail::logger()->info("cluster connected cluster={}", cluster_);
  } else {
    detail::logger()->warn("cluster unreachable cluster={} error=\"{}\"", cluster_, ev.detail);
  }
  if (history_.size() >= 64) history_.erase(history_.begin());
  history_.push_back(ev);
  if (observer_) observer_->onConnection(cluster_, ev);
  for (auto& l : listeners_) l(ev);
}

}  // namespace firstwork::kube
