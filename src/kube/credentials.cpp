#include "firstwork/kube/credentials.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "detail/log.hpp"
#include "detail/util.hpp"
#include "firstwork/core/rfc3339.hpp"

extern char** environ;  // NOLINT: POSIX

namespace firstwork::kube {

// ---------------------------------------------------------------------------------------------
// StaticCredentials

StaticCredentials::StaticCredentials(std::string token) : token_(std::move(token)) {}

void StaticCredentials::acquire(Callback done) {
  Credentials c;
  c.token = token_;
  c.generation = 1;
  done(std::move(c));
}

std::string StaticCredentials::describe() const {
  return token_.empty() ? "no bearer token" : "static token";
}

// ---------------------------------------------------------------------------------------------
// TokenFileCredentials

TokenFileCredentials::TokenFileCredentials(const Clock& clock, std::string path,
                                           std::chrono::milliseconds refreshPeriod,
                                           std::string fallbackToken)
    : clock_(clock),
      path_(std::move(path)),
      refreshPeriod_(refreshPeriod),
      fallbackToken_(std::move(fallbackToken)) {}

void TokenFileCredentials::acquire(Callback done) {
  MonotonicTime now = clock_.monotonicNow();
  bool due = !current_ || stale_ || !lastRead_ || now - *lastRead_ >= refreshPeriod_;
  if (due) {
    ++reads_;
    auto content = detail::readFile(path_);
    std::string token = content ? std::string(detail::trim(*content)) : std::string();
    if (content && !token.empty()) {
      if (!current_ || current_->token != token) {
        Credentials c;
        c.token = std::move(token);
        c.generation = ++generation_;
        current_ = std::move(c);
      }
      lastRead_ = now;
      stale_ = false;
    } else {
      std::string why = content ? path_ + " is empty" : content.error();
      if (current_) {
        // client-go keeps serving the last good token when a re-read fails.
        detail::logger()->warn("token file re-read failed, keeping the previous token error=\"{}\"",
                               why);
        lastRead_ = now;
      } else if (!fallbackToken_.empty()) {
        Credentials c;
        c.token = fallbackToken_;
        c.generation = ++generation_;
        current_ = std::move(c);
        detail::logger()->warn("token file unreadable, using the kubeconfig token error=\"{}\"",
                               why);
        lastRead_ = now;
      } else {
        done(makeError("token file: " + why));
        return;
      }
    }
  }
  done(*current_);
}

void TokenFileCredentials::invalidate(uint64_t generation) {
  if (current_ && current_->generation == generation) stale_ = true;
}

std::string TokenFileCredentials::describe() const { return "token file " + path_; }

// ---------------------------------------------------------------------------------------------
// ExecCredential parsing

Result<ParsedExecCredential> parseExecCredential(std::string_view json,
                                                 const std::string& apiVersion) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  simdjson::dom::element doc;
  if (parser.parse(padded).get(doc) != simdjson::SUCCESS) {
    return makeError("output is not JSON");
  }
  std::string_view version;
  if (doc["apiVersion"].get_string().get(version) != simdjson::SUCCESS) {
    return makeError("output has no apiVersion");
  }
  if (version != apiVersion) {
    return makeError("plugin returned apiVersion \"" + std::string(version) + "\", configured \"" +
                     apiVersion + "\"");
  }
  std::string_view kind;
  if (doc["kind"].get_string().get(kind) != simdjson::SUCCESS || kind != "ExecCredential") {
    return makeError("output is not an ExecCredential");
  }
  simdjson::dom::object status;
  if (doc["status"].get_object().get(status) != simdjson::SUCCESS) {
    return makeError("output has no status");
  }
  ParsedExecCredential out;
  std::string_view sv;
  if (status["token"].get_string().get(sv) == simdjson::SUCCESS) out.token = std::string(sv);
  if (status["clientCertificateData"].get_string().get(sv) == simdjson::SUCCESS) {
    out.clientCertPem = std::string(sv);
  }
  if (status["clientKeyData"].get_string().get(sv) == simdjson::SUCCESS) {
    out.clientKeyPem = std::string(sv);
  }
  if (out.clientCertPem.empty() != out.clientKeyPem.empty()) {
    return makeError("status has only one of clientCertificateData and clientKeyData");
  }
  if (out.token.empty() && out.clientCertPem.empty()) {
    return makeError("status has neither a token nor a client certificate");
  }
  if (status["expirationTimestamp"].get_string().get(sv) == simdjson::SUCCESS && !sv.empty()) {
    auto t = parseRfc3339(sv);
    if (!t) return makeError("status.expirationTimestamp: " + t.error());
    out.expiry = *t;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// ExecCredentials

struct ExecCredentials::Run {
  explicit Run(boost::asio::io_context& io) : out(io), deadline(io), reap(io) {}
  pid_t pid = -1;
  boost::asio::posix::stream_descriptor out;
  boost::asio::steady_timer deadline;
  boost::asio::steady_timer reap;
  std::array<char, 8192> buffer{};
  std::string output;
  bool killed = false;
  bool tooLarge = false;
  bool reaping = false;
  int reapPolls = 0;
  MonotonicTime started{};
};

namespace {

std::string baseName(const std::string& command) {
  auto slash = command.rfind('/');
  return slash == std::string::npos ? command : command.substr(slash + 1);
}

}  // namespace

ExecCredentials::ExecCredentials(boost::asio::io_context& io, const Clock& clock,
                                 ExecConfig config, ExecClusterInfo cluster, ExecOptions options)
    : io_(io),
      clock_(clock),
      config_(std::move(config)),
      cluster_(std::move(cluster)),
      options_(options),
      alive_(std::make_shared<bool>(true)) {}

ExecCredentials::~ExecCredentials() {
  alive_.reset();
  if (run_ && run_->pid > 0) {
    // The plugin is still running: kill it and reap it so no zombie is left behind. SIGKILL
    // makes the wait short.
    ::kill(run_->pid, SIGKILL);
    int status = 0;
    while (::waitpid(run_->pid, &status, 0) < 0 && errno == EINTR) {
    }
    run_->pid = -1;
  }
  if (run_) {
    boost::system::error_code ec;
    run_->out.close(ec);
    run_->deadline.cancel();
    run_->reap.cancel();
  }
}

std::string ExecCredentials::describe() const { return "exec plugin " + baseName(config_.command); }

std::string ExecCredentials::execInfoJson() const {
  nlohmann::json spec = {{"interactive", false}};
  if (config_.provideClusterInfo) {
    nlohmann::json c = {{"server", cluster_.server}};
    if (!cluster_.tlsServerName.empty()) c["tls-server-name"] = cluster_.tlsServerName;
    if (cluster_.insecureSkipTlsVerify) c["insecure-skip-tls-verify"] = true;
    if (!cluster_.caPem.empty()) {
      c["certificate-authority-data"] = detail::base64Encode(cluster_.caPem);
    }
    if (!cluster_.proxyUrl.empty()) c["proxy-url"] = cluster_.proxyUrl;
    if (cluster_.disableCompression) c["disable-compression"] = true;
    spec["cluster"] = std::move(c);
  }
  nlohmann::json info = {
      {"kind", "ExecCredential"}, {"apiVersion", config_.apiVersion}, {"spec", std::move(spec)}};
  return info.dump();
}

void ExecCredentials::acquire(Callback done) {
  bool fresh = current_ && !stale_ &&
               (!expiry_ || clock_.systemNow() + options_.refreshBefore < *expiry_);
  if (fresh) {
    done(*current_);
    return;
  }
  waiting_.push_back(std::move(done));
  if (!run_) startRun();
}

void ExecCredentials::invalidate(uint64_t generation) {
  if (current_ && current_->generation == generation) stale_ = true;
}

void ExecCredentials::startRun() {
  ++runs_;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    int err = errno;
    finishRun(makeError(describe() + ": pipe: " + std::strerror(err)), std::nullopt);
    return;
  }

  // argv / envp for posix_spawn: the daemon's environment, the configured variables, and
  // KUBERNETES_EXEC_INFO (later entries replace earlier ones with the same name).
  std::vector<std::string> args;
  args.push_back(config_.command);
  for (const auto& a : config_.args) args.push_back(a);
  std::vector<std::pair<std::string, std::string>> overrides = config_.env;
  overrides.emplace_back("KUBERNETES_EXEC_INFO", execInfoJson());
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    std::string_view name = entry.substr(0, eq);
    bool replaced = false;
    for (const auto& [k, v] : overrides) replaced = replaced || name == k;
    if (!replaced) env.emplace_back(entry);
  }
  for (const auto& [k, v] : overrides) env.push_back(k + "=" + v);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  // Sockets of other transfers must not leak into the plugin.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, config_.command.c_str(), &actions, nullptr, argv.data(),
                          envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    std::string msg = describe() + ": cannot start: " + std::strerror(rc);
    if (!config_.installHint.empty()) msg += " (" + config_.installHint + ")";
    finishRun(makeError(msg), std::nullopt);
    return;
  }

  auto run = std::make_shared<Run>(io_);
  run->pid = pid;
  run->started = clock_.monotonicNow();
  run->out.assign(fds[0]);
  run_ = run;
  std::weak_ptr<bool> alive = alive_;

  run->deadline.expires_after(options_.timeout);
  run->deadline.async_wait([alive, run](const boost::system::error_code& ec) {
    if (ec || alive.expired() || run->pid <= 0) return;
    // A hung plugin must not hold credentials hostage: kill it, stop reading (a grandchild
    // may keep the pipe open) and collect the exit status.
    run->killed = true;
    ::kill(run->pid, SIGKILL);
    boost::system::error_code ignored;
    run->out.close(ignored);
  });

  readMore(run);
}

void ExecCredentials::readMore(const std::shared_ptr<Run>& run) {
  std::weak_ptr<bool> alive = alive_;
  run->out.async_read_some(
      boost::asio::buffer(run->buffer),
      [this, alive, run](const boost::system::error_code& ec, size_t n) {
        if (alive.expired()) return;
        if (!ec) {
          run->output.append(run->buffer.data(), n);
          if (run->output.size() <= options_.maxOutputBytes) {
            readMore(run);
            return;
          }
          run->tooLarge = true;
          if (run->pid > 0) ::kill(run->pid, SIGKILL);
        }
        boost::system::error_code ignored;
        run->out.close(ignored);
        reap(run);
      });
}

// Called once stdout is closed. A plain waitpid could block the loop if the plugin lingers
// after closing stdout, so poll with WNOHANG on a short timer (few polls in practice).
void ExecCredentials::reap(const std::shared_ptr<Run>& run) {
  if (run->pid <= 0) return;
  int status = 0;
  pid_t r = ::waitpid(run->pid, &status, WNOHANG);
  if (r == 0) {
    if (++run->reapPolls > 20000) {  // ~100 s even after a SIGKILL: give up, do not spin
      run->pid = -1;
      finishRun(makeError(describe() + ": did not exit"), std::nullopt);
      return;
    }
    std::weak_ptr<bool> alive = alive_;
    run->reap.expires_after(std::chrono::milliseconds(5));
    run->reap.async_wait([this, alive, run](const boost::system::error_code& ec) {
      if (!ec && !alive.expired()) reap(run);
    });
    return;
  }
  pid_t pid = run->pid;
  run->pid = -1;
  run->deadline.cancel();
  auto elapsedMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                       clock_.monotonicNow() - run->started)
                       .count();
  int exitCode = -1;
  if (r == pid && WIFEXITED(status)) exitCode = WEXITSTATUS(status);
  // ECHILD (the host process ignores SIGCHLD): the status is unknown; judge by the output.
  bool unknownStatus = r < 0;
  detail::logger()->info("exec plugin ran command={} exit_code={} duration_ms={}",
                         baseName(config_.command), exitCode, elapsedMs);
  if (run->killed) {
    finishRun(makeError(describe() + ": killed after " + std::to_string(options_.timeout.count()) +
                        " ms timeout"),
              std::nullopt);
  } else if (run->tooLarge) {
    finishRun(makeError(describe() + ": output larger than " +
                        std::to_string(options_.maxOutputBytes) + " bytes"),
              std::nullopt);
  } else if (!unknownStatus && r == pid && WIFSIGNALED(status)) {
    finishRun(makeError(describe() + ": killed by signal " + std::to_string(WTERMSIG(status))),
              std::nullopt);
  } else if (!unknownStatus && exitCode != 0) {
    finishRun(makeError(describe() + ": exited with status " + std::to_string(exitCode)),
              std::nullopt);
  } else {
    auto parsed = parseExecCredential(run->output, config_.apiVersion);
    if (!parsed) {
      finishRun(makeError(describe() + ": " + parsed.error()), std::nullopt);
    } else {
      Credentials c;
      c.token = parsed->token;
      c.clientCertPem = parsed->clientCertPem;
      c.clientKeyPem = parsed->clientKeyPem;
      finishRun(std::move(c), parsed->expiry);
    }
  }
}

void ExecCredentials::finishRun(Result<Credentials> result, std::optional<SystemTime> expiry) {
  run_.reset();
  std::vector<Callback> waiting;
  waiting.swap(waiting_);
  if (result) {
    Credentials c = std::move(result).value();
    c.generation = ++generation_;
    current_ = c;
    expiry_ = expiry;
    stale_ = false;
    for (auto& cb : waiting) cb(c);
    return;
  }
  detail::logger()->warn("credential refresh failed source=\"{}\" error=\"{}\"", describe(),
                         result.error());
  // A credential that is close to (but not past) its expiry is still better than none.
  if (current_ && !stale_ && (!expiry_ || clock_.systemNow() < *expiry_)) {
    for (auto& cb : waiting) cb(*current_);
    return;
  }
  for (auto& cb : waiting) cb(makeError(result.error()));
}

// ---------------------------------------------------------------------------------------------

std::unique_ptr<CredentialSource> makeCredentialSource(boost::asio::io_context& io,
                                                       const Clock& clock,
                                                       const RestConfig& config,
                                                       const CredentialOptions& options) {
  if (!config.tokenFile.empty()) {
    return std::make_unique<TokenFileCredentials>(clock, config.tokenFile,
                                                  options.tokenFileRefresh, config.token);
  }
  if (!config.token.empty()) return std::make_unique<StaticCredentials>(config.token);
  if (config.exec && config.clientCertPem.empty()) {
    ExecClusterInfo info;
    info.server = config.server;
    info.tlsServerName = config.tlsServerName;
    info.insecureSkipTlsVerify = config.insecureSkipTlsVerify;
    info.caPem = config.caPem;
    info.proxyUrl = config.proxyUrl;
    info.disableCompression = config.disableCompression;
    return std::make_unique<ExecCredentials>(io, clock, *config.exec, std::move(info),
                                             options.exec);
  }
  return std::make_unique<StaticCredentials>();
}

}  // namespace firstwork::kube
