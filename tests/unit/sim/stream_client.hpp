#pragma once
// Test-only raw HTTP/1.1 client over a plain TCP socket: sends one GET and records the exact
// bytes the server writes, de-chunks them, and notes when each line and the end arrived. The
// fault tests need this level (half lines, a missing terminating chunk, byte timing), which a
// full HTTP client would hide.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace firstwork::sim::testing {

class StreamClient {
 public:
  using Clock = std::chrono::steady_clock;

  StreamClient(int port, const std::string& target, const std::string& token,
               const std::string& extraHeaders = {}) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    if (!connected_) return;
    std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (!token.empty()) req += "Authorization: Bearer " + token + "\r\n";
    req += extraHeaders + "\r\n";
    (void)::send(fd_, req.data(), req.size(), MSG_NOSIGNAL);
    reader_ = std::thread([this] { readLoop(); });
  }

  ~StreamClient() {
    ::shutdown(fd_, SHUT_RDWR);
    if (reader_.joinable()) reader_.join();
    ::close(fd_);
  }

  StreamClient(const StreamClient&) = delete;
  StreamClient& operator=(const StreamClient&) = delete;

  bool connected() const { return connected_; }

  /// How long a wait gives up after: a deadline, not a timing check (a wait returns as soon as
  /// what it waits for happens). Five seconds was too short for the server's watch tests under
  /// TSan six at a time on a 2-vCPU machine (12 of them missed it together, every time, while
  /// each passed alone in 1.7 s).
  static constexpr std::chrono::milliseconds kDefaultWait = std::chrono::seconds(30);

  bool waitBodyContains(const std::string& text,
                        std::chrono::milliseconds limit = kDefaultWait) {
    return waitFor([&] { return body_.find(text) != std::string::npos; }, limit);
  }

  // Waits for `pred` over the client's state, at most `limit`. `pred` runs under the client's
  // lock: it must read members directly, not call the locking accessors.
  template <class Pred>
  bool waitFor(Pred pred, std::chrono::milliseconds limit = kDefaultWait) {
    std::unique_lock<std::mutex> lk(mu_);
    return cv_.wait_for(lk, limit, [&] { return pred(); });
  }

  bool waitHeaders() {
    return waitFor([&] { return headersDone_ || closed_; });
  }
  bool waitLines(size_t n, std::chrono::milliseconds limit = kDefaultWait) {
    return waitFor([&] { return lines_.size() >= n; }, limit);
  }
  bool waitClosed(std::chrono::milliseconds limit = kDefaultWait) {
    return waitFor([&] { return closed_; }, limit);
  }
  bool waitFinalChunk(std::chrono::milliseconds limit = kDefaultWait) {
    return waitFor([&] { return finalChunk_; }, limit);
  }

  int status() {
    std::lock_guard<std::mutex> lk(mu_);
    return status_;
  }
  // Header value (first match, case-insensitive name), "" when absent.
  std::string header(const std::string& name) {
    std::lock_guard<std::mutex> lk(mu_);
    for (const auto& [k, v] : headers_) {
      if (k.size() == name.size() &&
          std::equal(k.begin(), k.end(), name.begin(),
                     [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
        return v;
      }
    }
    return {};
  }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lk(mu_);
    return lines_;
  }
  std::vector<Clock::time_point> lineTimes() {
    std::lock_guard<std::mutex> lk(mu_);
    return lineTimes_;
  }
  // De-chunked bytes after the last complete line.
  std::string partial() {
    std::lock_guard<std::mutex> lk(mu_);
    return body_.substr(lineStart_);
  }
  std::string body() {
    std::lock_guard<std::mutex> lk(mu_);
    return body_;
  }
  bool closed() {
    std::lock_guard<std::mutex> lk(mu_);
    return closed_;
  }
  bool finalChunk() {
    std::lock_guard<std::mutex> lk(mu_);
    return finalChunk_;
  }

 private:
  void readLoop() {
    char buf[16384];
    for (;;) {
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      std::lock_guard<std::mutex> lk(mu_);
      if (n <= 0) {
        closed_ = true;
        cv_.notify_all();
        return;
      }
      raw_.append(buf, static_cast<size_t>(n));
      parse();
      cv_.notify_all();
    }
  }

  void parse() {
    if (!headersDone_) {
      const size_t end = raw_.find("\r\n\r\n");
      if (end == std::string::npos) return;
      const std::string head = raw_.substr(0, end);
      pos_ = end + 4;
      headersDone_ = true;
      size_t lineEnd = head.find("\r\n");
      const std::string statusLine = head.substr(0, lineEnd);
      status_ = std::stoi(statusLine.substr(statusLine.find(' ') + 1, 3));
      while (lineEnd != std::string::npos) {
        const size_t next = head.find("\r\n", lineEnd + 2);
        const std::string h = head.substr(lineEnd + 2, next - lineEnd - 2);
        const size_t colon = h.find(':');
        if (colon != std::string::npos) {
          std::string v = h.substr(colon + 1);
          while (!v.empty() && v.front() == ' ') v.erase(0, 1);
          headers_.emplace_back(h.substr(0, colon), v);
        }
        lineEnd = next;
      }
      for (const auto& [k, v] : headers_) {
        std::string lower = k;
        for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (lower == "transfer-encoding" && v == "chunked") chunked_ = true;
        if (lower == "content-length") contentLength_ = std::stoul(v);
      }
    }
    for (;;) {
      if (!chunked_) {
        const size_t take =
            std::min(raw_.size() - pos_, contentLength_ - std::min(contentLength_, consumed_));
        body_.append(raw_, pos_, take);
        pos_ += take;
        consumed_ += take;
        break;
      }
      if (finalChunk_) break;
      const size_t sizeEnd = raw_.find("\r\n", pos_);
      if (sizeEnd == std::string::npos) break;
      const size_t size = std::stoul(raw_.substr(pos_, sizeEnd - pos_), nullptr, 16);
      if (raw_.size() < sizeEnd + 2 + size + 2) break;
      if (size == 0) {
        finalChunk_ = true;
        pos_ = sizeEnd + 4;
        break;
      }
      body_.append(raw_, sizeEnd + 2, size);
      pos_ = sizeEnd + 2 + size + 2;
    }
    for (size_t nl = body_.find('\n', lineStart_); nl != std::string::npos;
         nl = body_.find('\n', lineStart_)) {
      lines_.push_back(body_.substr(lineStart_, nl - lineStart_));
      lineTimes_.push_back(Clock::now());
      lineStart_ = nl + 1;
    }
  }

  int fd_ = -1;
  bool connected_ = false;
  std::thread reader_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string raw_;
  size_t pos_ = 0;
  bool headersDone_ = false;
  int status_ = 0;
  std::vector<std::pair<std::string, std::string>> headers_;
  bool chunked_ = false;
  size_t contentLength_ = 0;
  size_t consumed_ = 0;
  bool finalChunk_ = false;
  std::string body_;
  size_t lineStart_ = 0;
  std::vector<std::string> lines_;
  std::vector<Clock::time_point> lineTimes_;
  bool closed_ = false;
};

}  // namespace firstwork::sim::testing
