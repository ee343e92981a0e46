#pragma once
#include <deque>
#include <string>
#include <string_view>
#include <utility>

#include "firstwork/kube/kube_transport.hpp"

namespace firstwork::testing {

/// A scripted KubeTransport: records every request (path, streaming) and lets the test answer
/// it piece by piece (head, body chunks, end). Never calls back inside start(), like the real
/// one. Loop thread (the test thread) only.
class FakeTransport final : public kube::KubeTransport {
 public:
  struct Request {
    RequestId id = 0;
    kube::HttpRequest request;
    kube::RequestCallbacks callbacks;
    bool cancelled = false;
    bool finished = false;
    bool headSent = false;
    kube::ResponseHead head;
    bool open() const { return !cancelled && !finished; }
  };

  // KubeTransport
  RequestId start(kube::HttpRequest request, kube::RequestCallbacks callbacks) override {
    Request r;
    r.id = next_++;
    r.request = std::move(request);
    r.callbacks = std::move(callbacks);
    requests_.push_back(std::move(r));
    return requests_.back().id;
  }
  void cancel(RequestId id) override {
    if (Request* r = find(id)) r->cancelled = true;
  }
  const std::string& server() const override { return server_; }

  // --- test side --------------------------------------------------------------------------
  std::deque<Request>& requests() { return requests_; }
  Request* find(RequestId id) {
    for (auto& r : requests_) {
      if (r.id == id) return &r;
    }
    return nullptr;
  }
  /// The newest request still open, or nullptr.
  Request* lastOpen() {
    for (auto it = requests_.rbegin(); it != requests_.rend(); ++it) {
      if (it->open()) return &*it;
    }
    return nullptr;
  }

  void head(Request& r, long status, kube::ResponseHead extra = {}) {
    if (!r.open() || r.headSent) return;
    r.headSent = true;
    extra.status = status;
    r.head = extra;
    if (r.callbacks.onHead) r.callbacks.onHead(r.head);
  }
  /// Body bytes of a streaming 2xx response.
  void data(Request& r, std::string_view chunk) {
    if (!r.open()) return;
    if (!r.headSent) head(r, 200);
    if (r.open() && r.callbacks.onData) r.callbacks.onData(chunk);
  }
  /// Ends the request: `body` is the full body (non-streaming) or an error Status (streaming).
  void end(Request& r, std::string body = {}, std::string error = {}) {
    if (!r.open()) return;
    if (!r.headSent && error.empty()) head(r, 200);
    if (!r.open()) return;
    r.finished = true;
    kube::HttpResult result;
    result.head = r.head;
    result.body = std::move(body);
    result.error = std::move(error);
    if (r.callbacks.onDone) r.callbacks.onDone(std::move(result));
  }
  /// A complete non-streaming answer.
  void respond(Request& r, long status, std::string body, kube::ResponseHead extra = {}) {
    head(r, status, extra);
    end(r, std::move(body));
  }
  /// The request never reached a server.
  void fail(Request& r, std::string error) {
    if (!r.open()) return;
    r.finished = true;
    kube::HttpResult result;
    result.error = std::move(error);
    if (r.callbacks.onDone) r.callbacks.onDone(std::move(result));
  }

 private:
  std::deque<Request> requests_;
  RequestId next_ = 1;
  std::string server_ = "https://fake.invalid:6443";
};

}  // namespace firstwork::testing
