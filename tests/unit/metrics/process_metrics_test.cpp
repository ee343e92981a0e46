#include "firstwork/metrics/process_metrics.hpp"

#include <fcntl.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace firstwork::metrics;

namespace {

double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}
// When this test binary got to its static initialisers: shortly after it started.
const double kLoadedAt = wallSeconds();

double processCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

struct Sample {
  prometheus::MetricType type;
  double value;
};

std::map<std::string, Sample> collect(const prometheus::Collectable& c) {
  std::map<std::string, Sample> out;
  for (const auto& f : c.Collect()) {
    REQUIRE(f.metric.size() == 1);
    CHECK(f.metric[0].label.empty());
    CHECK_FALSE(f.help.empty());
    const double v = f.type == prometheus::MetricType::Counter ? f.metric[0].counter.value
                                                               : f.metric[0].gauge.value;
    CHECK(out.emplace(f.name, Sample{f.type, v}).second);
  }
  return out;
}

// A /proc/<pid>/stat line (proc(5)) of a process whose command name holds spaces and
// parentheses; fields 3 to 27.
const char* const kStat =
    "4242 (fw (d) x)) S 1 42 42 0 -1 4194560 1000 0 2 0 250 150 7 3 20 0 6 0 12345 104857600 "
    "2560 18446744073709551615 1 1 0\n";

}  // namespace

TEST_CASE("a process's stat line gives its CPU time, start, and memory in base units",
          "[metrics][process]") {
  auto s = parseProcessStat(kStat, 100, 4096, 1'700'000'000);
  REQUIRE(s.ok());
  // utime 250 + stime 150 ticks at 100 a second; the children's 7 + 3 are not the process's own.
  CHECK(s->cpuSeconds == Approx(4.0));
  // boot + 12345 ticks.
  CHECK(s->startTimeSeconds == Approx(1'700'000'123.45));
  CHECK(s->virtualBytes == 104857600.0);
  CHECK(s->residentBytes == 2560.0 * 4096);  // pages
}

TEST_CASE("a malformed stat line is an error naming what is missing", "[metrics][process]") {
  SECTION("no command name") {
    auto s = parseProcessStat("4242 fw S 1 42", 100, 4096, 0);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().find("command name") != std::string::npos);
  }
  SECTION("cut before rss") {
    std::string cut(kStat);
    cut.resize(cut.find(" 2560"));
    auto s = parseProcessStat(cut, 100, 4096, 0);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().find("23 fields") != std::string::npos);
  }
  SECTION("a field that is not a number") {
    std::string bad(kStat);
    bad.replace(bad.find(" 250 "), 5, " 2x0 ");
    CHECK_FALSE(parseProcessStat(bad, 100, 4096, 0).ok());
  }
}

TEST_CASE("the boot time is read from /proc/stat's btime line", "[metrics][process]") {
  const std::string text =
      "cpu  1 2 3 4 5 6 7 0 0 0\ncpu0 1 2 3 4 5 6 7 0 0 0\nintr 100 0 9 0\nctxt 5\n"
      "btime 1764000000\nprocesses 99\n";
  auto b = parseBootTime(text);
  REQUIRE(b.ok());
  CHECK(*b == 1764000000.0);
  CHECK_FALSE(parseBootTime("cpu 1 2\nctxt 5\n").ok());
  CHECK_FALSE(parseBootTime("btime soon\n").ok());
}

TEST_CASE("this process's own metrics, as client_golang's process collector names them",
          "[metrics][process]") {
  ProcessMetrics process;
  auto before = collect(process);
  for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes",
                           "process_virtual_memory_bytes", "process_start_time_seconds",
                           "process_open_fds", "process_max_fds"}) {
    INFO(name);
    REQUIRE(before.count(name));
    CHECK(before[name].type == (std::strcmp(name, "process_cpu_seconds_total") == 0
                                    ? prometheus::MetricType::Counter
                                    : prometheus::MetricType::Gauge));
  }

  SECTION("CPU time is the kernel's count for the process") {
    const double cpu = processCpuSeconds();
    // /proc counts in clock ticks (10 ms): within a few of the precise figure.
    CHECK(before["process_cpu_seconds_total"].value == Approx(cpu).margin(0.05));
    // Half a second of work shows.
    while (processCpuSeconds() < cpu + 0.5) {
    }
    auto after = collect(process);
    CHECK(after["process_cpu_seconds_total"].value - before["process_cpu_seconds_total"].value ==
          Approx(0.5).margin(0.05));
  }
  SECTION("resident memory grows with memory touched, virtual memory is larger") {
    CHECK(before["process_virtual_memory_bytes"].value >=
          before["process_resident_memory_bytes"].value);
    std::vector<char> touched(64 << 20, 1);
    auto after = collect(process);
    CHECK(after["process_resident_memory_bytes"].value -
              before["process_resident_memory_bytes"].value >=
          48 << 20);
    CHECK(touched[12345] == 1);
  }
  SECTION("open descriptors are counted, the limit is the soft limit") {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    REQUIRE(null >= 0);
    auto after = collect(process);
    CHECK(after["process_open_fds"].value == before["process_open_fds"].value + 3);
    close(fds[0]);
    close(fds[1]);
    close(null);
    CHECK(collect(process)["process_open_fds"].value == before["process_open_fds"].value);
    rlimit limit{};
    REQUIRE(getrlimit(RLIMIT_NOFILE, &limit) == 0);
    CHECK(before["process_max_fds"].value == static_cast<double>(limit.rlim_cur));
  }
  SECTION("the start time is when this binary started") {
    // btime is whole seconds, and the loader ran before the static initialisers.
    CHECK(before["process_start_time_seconds"].value <= kLoadedAt + 1.0);
    CHECK(before["process_start_time_seconds"].value >= kLoadedAt - 5.0);
  }
}

TEST_CASE("collectables render as one, the registry's families first", "[metrics][process]") {
  prometheus::Registry registry;
  prometheus::BuildGauge().Name("firstwork_test_gauge").Help("h").Register(registry).Add({}).Set(7);
  ProcessMetrics process;
  Collectables both({&registry, &process});
  auto families = both.Collect();
  REQUIRE(families.size() == 1 + process.Collect().size());
  CHECK(families.front().name == "firstwork_test_gauge");
  CHECK(families.front().metric.at(0).gauge.value == 7);
  CHECK(families.back().name.rfind("process_", 0) == 0);
}
