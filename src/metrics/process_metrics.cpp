#include "firstwork/metrics/process_metrics.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace firstwork::metrics {
namespace {

// The families, as client_golang's process collector names and describes them (names, help and
// types are what dashboards and alerts written for any exporter query).
struct FamilyInfo {
  const char* name;
  const char* help;
  prometheus::MetricType type;
};
enum Which : size_t { kCpu, kResident, kVirtual, kStart, kOpenFds, kMaxFds };
constexpr FamilyInfo kFamilies[] = {
    {"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
     prometheus::MetricType::Counter},
    {"process_resident_memory_bytes", "Resident memory size in bytes.",
     prometheus::MetricType::Gauge},
    {"process_virtual_memory_bytes", "Virtual memory size in bytes.",
     prometheus::MetricType::Gauge},
    {"process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
     prometheus::MetricType::Gauge},
    {"process_open_fds", "Number of open file descriptors.", prometheus::MetricType::Gauge},
    {"process_max_fds", "Maximum number of open file descriptors.", prometheus::MetricType::Gauge},
};

prometheus::MetricFamily family(Which which, double value) {
  const FamilyInfo& info = kFamilies[which];
  prometheus::MetricFamily f;
  f.name = info.name;
  f.help = info.help;
  f.type = info.type;
  prometheus::ClientMetric m;
  if (info.type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
  return f;
}

/// The whole of a small file of /proc (whose size stat(2) reports as 0), or nothing.
std::optional<std::string> readProcFile(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::optional<uint64_t> toUnsigned(std::string_view s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

/// Entries of /proc/self/fd: the open descriptors, the directory's own among them (as
/// client_golang counts them).
std::optional<double> openFds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  double n = 0;
  while (const dirent* e = ::readdir(dir)) {
    const std::string_view name(e->d_name);
    if (name != "." && name != "..") ++n;
  }
  ::closedir(dir);
  return n;
}

}  // namespace

Result<ProcessStat> parseProcessStat(std::string_view stat, double clockTicks, double pageSize,
                                     double bootTimeSeconds) {
  const size_t close = stat.rfind(')');
  if (close == std::string_view::npos || stat.find('(') > close) {
    return makeError("process stat: no command name in parentheses");
  }
  // Fields after the command name, from field 3 (state) on: field N is rest[N - 3].
  std::vector<std::string_view> rest;
  std::string_view tail = stat.substr(close + 1);
  while (!tail.empty()) {
    const size_t start = tail.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    tail.remove_prefix(start);
    const size_t end = std::min(tail.find_first_of(" \n"), tail.size());
    rest.push_back(tail.substr(0, end));
    tail.remove_prefix(end);
  }
  // utime (14), stime (15), starttime (22), vsize (23), rss (24).
  auto field = [&](size_t n) -> std::optional<uint64_t> {
    if (n - 3 >= rest.size()) return std::nullopt;
    return toUnsigned(rest[n - 3]);
  };
  const auto utime = field(14), stime = field(15), start = field(22), vsize = field(23),
             rss = field(24);
  if (!utime || !stime || !start || !vsize || !rss) {
    return makeError("process stat: " + std::to_string(rest.size() + 2) +
                     " fields, or one of utime, stime, starttime, vsize, rss not a number");
  }
  if (clockTicks <= 0 || pageSize <= 0)
    return makeError("process stat: no clock tick or page size");
  ProcessStat s;
  s.cpuSeconds = static_cast<double>(*utime + *stime) / clockTicks;
  s.startTimeSeconds = bootTimeSeconds + static_cast<double>(*start) / clockTicks;
  s.virtualBytes = static_cast<double>(*vsize);
  s.residentBytes = static_cast<double>(*rss) * pageSize;
  return s;
}

Result<double> parseBootTime(std::string_view procStat) {
  size_t at = 0;
  while (at < procStat.size()) {
    const size_t end = std::min(procStat.find('\n', at), procStat.size());
    std::string_view line = procStat.substr(at, end - at);
    if (line.starts_with("btime ")) {
      line.remove_prefix(6);
      while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
      while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.remove_suffix(1);
      if (auto v = toUnsigned(line)) return static_cast<double>(*v);
      return makeError("/proc/stat: btime is not a number");
    }
    at = end + 1;
  }
  return makeError("/proc/stat: no btime line");
}

ProcessMetrics::ProcessMetrics()
    : clockTicks_(static_cast<double>(::sysconf(_SC_CLK_TCK))),
      pageSize_(static_cast<double>(::sysconf(_SC_PAGESIZE))),
      bootTime_([]() -> std::optional<double> {
        // The boot time does not change: /proc/stat (a line a CPU, and the interrupt counts: tens
        // of KB on a large node) is read once, not at every rendering.
        auto text = readProcFile("/proc/stat");
        if (!text) return std::nullopt;
        auto b = parseBootTime(*text);
        return b ? std::optional<double>(*b) : std::nullopt;
      }()) {}

std::vector<prometheus::MetricFamily> ProcessMetrics::Collect() const {
  std::vector<prometheus::MetricFamily> out;
  const std::optional<double>& boot = bootTime_;
  if (auto text = readProcFile("/proc/self/stat")) {
    if (auto s = parseProcessStat(*text, clockTicks_, pageSize_, boot.value_or(0))) {
      out.push_back(family(kCpu, s->cpuSeconds));
      out.push_back(family(kResident, s->residentBytes));
      out.push_back(family(kVirtual, s->virtualBytes));
      if (boot) out.push_back(family(kStart, s->startTimeSeconds));
    }
  }
  if (auto n = openFds()) out.push_back(family(kOpenFds, *n));
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    out.push_back(family(kMaxFds, static_cast<double>(limit.rlim_cur)));
  }
  return out;
}

std::vector<prometheus::MetricFamily> Collectables::Collect() const {
  std::vector<prometheus::MetricFamily> out;
  for (const auto* part : parts_) {
    auto families = part->Collect();
    if (out.empty()) {
      out = std::move(families);
    } else {
      out.insert(out.end(), std::make_move_iterator(families.begin()),
                 std::make_move_iterator(families.end()));
    }
  }
  return out;
}

}  // namespace firstwork::metrics
