#include "firstwork/signals/useful_work_probe.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <cctype>
#include <fstream>
#include <sstream>

#include "firstwork/core/thread_name.hpp"
#include "firstwork/log/log.hpp"
#include "firstwork/log/redact.hpp"
#include "firstwork/metrics/self_metrics.hpp"

namespace firstwork::signals {
namespace {

void initCurlOnce() {
  // curl_global_init is not guaranteed thread-safe; run it once before any handle exists.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string percentEncode(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 3);
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
}

const log::Logger& logger() {
  static const log::Logger instance("signals");
  return instance;
}

}  // namespace

struct UsefulWorkProbe::Fetch {
  CURL* curl = nullptr;
  std::string body;
  size_t max = 0;
  bool tooLarge = false;
  const std::atomic<bool>* stopping = nullptr;
  char errbuf[CURL_ERROR_SIZE] = {};

  ~Fetch() {
    if (curl != nullptr) curl_easy_cleanup(curl);
  }

  // C callbacks: nothing may throw through libcurl.
  static size_t onData(char* ptr, size_t size, size_t count, void* user) noexcept {
    auto* self = static_cast<Fetch*>(user);
    size_t len = size * count;
    if (self->body.size() + len > self->max) {
      self->tooLarge = true;
      return 0;  // anything but `len` aborts the transfer
    }
    try {
      self->body.append(ptr, len);
    } catch (...) {
      return 0;
    }
    return len;
  }
  static int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) noexcept {
    return static_cast<Fetch*>(user)->stopping->load() ? 1 : 0;
  }
};

UsefulWorkProbe::UsefulWorkProbe(ProbeOptions options, const Clock& clock,
                                 SignalCallback callback, metrics::SelfMetrics* metrics)
    : options_(std::move(options)), clock_(clock), callback_(std::move(callback)),
      metrics_(metrics) {
  initCurlOnce();
  while (!options_.url.empty() && options_.url.back() == '/') options_.url.pop_back();
}

UsefulWorkProbe::~UsefulWorkProbe() { stop(); }

std::string UsefulWorkProbe::queryUrl() const {
  return fmt::format("{}/api/v1/query?query={}", options_.url, percentEncode(options_.query));
}

PollOutcome UsefulWorkProbe::pollOnce() {
  std::lock_guard poll_lock(poll_mu_);
  std::string token;
  if (!options_.bearerTokenFile.empty()) {
    std::ifstream in(options_.bearerTokenFile, std::ios::binary);
    std::stringstream ss;
    if (in) ss << in.rdbuf();
    token = trim(ss.str());
    if (token.empty()) {
      return record({"bad_token",
                     fmt::format("bearer token file \"{}\" is unreadable or empty",
                                 options_.bearerTokenFile),
                     0, 0});
    }
    log::SecretScrubber::global().addSecret(token);
  }

  if (!fetch_) {
    fetch_ = std::make_unique<Fetch>();
    fetch_->curl = curl_easy_init();
    if (fetch_->curl == nullptr) {
      fetch_.reset();
      return record({"transport_error", "curl_easy_init failed", 0, 0});
    }
  }
  Fetch& f = *fetch_;
  // Reset keeps the connection cache (keep-alive, TLS session) but clears every option.
  curl_easy_reset(f.curl);
  f.body.clear();
  f.tooLarge = false;
  f.max = options_.maxResponseBytes;
  f.stopping = &stopping_;
  f.errbuf[0] = '\0';

  std::string url = queryUrl();
  curl_slist* headers = curl_slist_append(nullptr, "Accept: application/json");
  std::string auth = token.empty() ? std::string() : "Authorization: Bearer " + token;
  if (!auth.empty()) headers = curl_slist_append(headers, auth.c_str());
  long timeout_ms = static_cast<long>(options_.timeout.count());
  curl_easy_setopt(f.curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(f.curl, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(f.curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(f.curl, CURLOPT_ACCEPT_ENCODING, "");
  curl_easy_setopt(f.curl, CURLOPT_USERAGENT, "firstworkd");
  curl_easy_setopt(f.curl, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(f.curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_easy_setopt(f.curl, CURLOPT_NOSIGNAL, 1L);
  // A redirect could carry the bearer token to another host: follow none.
  curl_easy_setopt(f.curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(f.curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(f.curl, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(f.curl, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!options_.caFile.empty()) curl_easy_setopt(f.curl, CURLOPT_CAINFO, options_.caFile.c_str());
  curl_easy_setopt(f.curl, CURLOPT_WRITEFUNCTION, &Fetch::onData);
  curl_easy_setopt(f.curl, CURLOPT_WRITEDATA, &f);
  curl_easy_setopt(f.curl, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(f.curl, CURLOPT_XFERINFOFUNCTION, &Fetch::onProgress);
  curl_easy_setopt(f.curl, CURLOPT_XFERINFODATA, &f);
  curl_easy_setopt(f.curl, CURLOPT_ERRORBUFFER, f.errbuf);
  CURLcode rc = curl_easy_perform(f.curl);
  long status = 0;
  curl_easy_getinfo(f.curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);

  if (rc != CURLE_OK) {
    if (rc == CURLE_ABORTED_BY_CALLBACK && stopping_) return record({"aborted", "stopped", 0, 0});
    if (f.tooLarge) {
      return record({"transport_error",
                     fmt::format("response larger than {} bytes", options_.maxResponseBytes), 0,
                     0});
    }
    std::string detail = f.errbuf[0] != '\0' ? f.errbuf : curl_easy_strerror(rc);
    return record({"transport_error", detail, 0, 0});
  }
  if (status != 200) {
    // Prometheus explains 400/422/503 in a JSON error body; show that rather than the status.
    auto parsed = parsePromQueryResponse(f.body);
    std::string detail = parsed.ok() ? std::string("unexpected response") : parsed.error();
    return record({"http_error", fmt::format("HTTP {}: {}", status, detail), 0, 0});
  }
  auto parsed = parsePromQueryResponse(f.body);
  if (!parsed.ok()) return record({"parse_error", parsed.error(), 0, 0});

  ExtractOptions extract_options{options_.namespaceLabel, options_.podLabel,
                                 options_.valueIsTimestamp, options_.clusterLabel};
  Extracted extracted = extractUsefulWork(*parsed, extract_options);
  MonotonicTime now = clock_.monotonicNow();
  std::vector<UsefulWorkSignal> fresh;
  {
    std::lock_guard lock(mu_);
    for (auto& signal : extracted.signals) {
      auto key = std::make_tuple(signal.podNamespace, signal.podName, signal.cluster);
      auto [it, inserted] = reported_.try_emplace(key, now);
      if (inserted) {
        fresh.push_back(std::move(signal));
      } else {
        it->second = now;
      }
    }
    std::erase_if(reported_, [&](const auto& entry) {
      return now - entry.second > options_.forgetAfter;
    });
  }
  if (parsed->malformedSeries > 0 || extracted.seriesWithoutPod > 0) {
    uint64_t suppressed = 0;
    if (error_log_.allow(now, &suppressed)) {
      logger().warn("PromQL useful-work query returned unusable series",
                    {{"malformed", parsed->malformedSeries},
                     {"without_pod_labels", extracted.seriesWithoutPod},
                     {"namespace_label", options_.namespaceLabel},
                     {"pod_label", options_.podLabel},
                     {"suppressed", suppressed}});
    }
  }
  if (!fresh.empty() && callback_) {
    try {
      callback_(fresh);
    } catch (const std::exception& e) {
      logger().error("useful-work signal callback failed", {{"error", e.what()}});
    } catch (...) {
      logger().error("useful-work signal callback failed");
    }
  }
  return record({"ok", "", parsed->series.size(), fresh.size()});
}

PollOutcome UsefulWorkProbe::record(PollOutcome outcome) {
  outcome.error = log::SecretScrubber::global().scrub(outcome.error);
  if (metrics_ != nullptr && outcome.result != "aborted") metrics_->usefulWorkQuery(outcome.result);
  bool ok = outcome.result == "ok";
  bool recovered = false;
  {
    std::lock_guard lock(mu_);
    ++stats_.polls;
    stats_.signals += outcome.newSignals;
    stats_.trackedPods = reported_.size();
    if (!ok && outcome.result != "aborted") {
      ++stats_.failures;
      stats_.lastError = outcome.error;
      failing_ = true;
    } else if (ok && failing_) {
      failing_ = false;
      recovered = true;
    }
  }
  if (recovered) {
    error_log_.reset();
    logger().info("PromQL useful-work query recovered", {{"query", options_.query}});
  } else if (!ok && outcome.result != "aborted") {
    uint64_t suppressed = 0;
    if (error_log_.allow(clock_.monotonicNow(), &suppressed)) {
      logger().warn("PromQL useful-work query failed", {{"result", outcome.result},
                                                        {"error", outcome.error},
                                                        {"query", options_.query},
                                                        {"suppressed", suppressed}});
    }
  }
  return outcome;
}

void UsefulWorkProbe::start() {
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] {
    nameThisThread("fw-probe");
    while (!stopping_) {
      pollOnce();
      std::unique_lock lock(wake_mu_);
      wake_.wait_for(lock, options_.interval, [this] { return stopping_.load(); });
    }
  });
}

void UsefulWorkProbe::stop() {
  {
    std::lock_guard lock(wake_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  stopping_ = false;  // pollOnce() may be driven by hand again
}

void UsefulWorkProbe::forget(const std::string& podNamespace, const std::string& podName) {
  std::lock_guard lock(mu_);
  std::erase_if(reported_, [&](const auto& entry) {
    return std::get<0>(entry.first) == podNamespace && std::get<1>(entry.first) == podName;
  });
}

ProbeStats UsefulWorkProbe::stats() const {
  std::lock_guard lock(mu_);
  ProbeStats s = stats_;
  s.trackedPods = reported_.size();
  return s;
}

}  // namespace firstwork::signals
