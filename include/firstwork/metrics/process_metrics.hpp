#pragma once
#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "firstwork/core/result.hpp"

namespace firstwork::metrics {

/// What /proc/<pid>/stat says of a process, in base units.
struct ProcessStat {
  double cpuSeconds = 0;        // utime + stime
  double startTimeSeconds = 0;  // since the Unix epoch
  double virtualBytes = 0;      // vsize
  double residentBytes = 0;     // rss pages * page size
};

/// Parses one /proc/<pid>/stat line (proc(5)): the command name, in parentheses, may itself hold
/// spaces and parentheses, so the fields are counted from its last ')'. `clockTicks` is
/// sysconf(_SC_CLK_TCK), `pageSize` sysconf(_SC_PAGESIZE), `bootTimeSeconds` /proc/stat's btime.
Result<ProcessStat> parseProcessStat(std::string_view stat, double clockTicks, double pageSize,
                                     double bootTimeSeconds);
/// The boot time (`btime`, seconds since the Unix epoch) in the text of /proc/stat.
Result<double> parseBootTime(std::string_view procStat);

/// The process metrics every Prometheus client library exports, under the same names, help and
/// types as client_golang's process collector (which kube-state-metrics and node_exporter serve):
///   process_cpu_seconds_total       counter  user and system CPU time
///   process_resident_memory_bytes   gauge    resident set size
///   process_virtual_memory_bytes    gauge    virtual memory size
///   process_start_time_seconds      gauge    start time since the Unix epoch
///   process_open_fds                gauge    open file descriptors
///   process_max_fds                 gauge    the soft limit of open file descriptors
/// prometheus-cpp has no such collector. Read from /proc/self at each Collect() (a scrape's
/// rendering): a family that cannot be read is left out, and the others are still served.
/// Thread-safe (its state, the boot time, is read once at construction).
class ProcessMetrics : public prometheus::Collectable {
 public:
  ProcessMetrics();
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  double clockTicks_;
  double pageSize_;
  std::optional<double> bootTime_;  // /proc/stat's btime, read once; none when unreadable
};

/// Several collectables rendered as one (the registry, then the process metrics). The parts must
/// outlive this object.
class Collectables : public prometheus::Collectable {
 public:
  explicit Collectables(std::vector<const prometheus::Collectable*> parts)
      : parts_(std::move(parts)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::vector<const prometheus::Collectable*> parts_;
};

}  // namespace firstwork::metrics
