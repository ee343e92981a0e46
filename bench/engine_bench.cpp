// firstwork_engine_bench: decode + milestone-engine throughput on a realistic watch-event mix,
// measured against raw simdjson On-Demand extraction of the same fields from the same bytes.
//
// The event stream is generated deterministically (fixed seed): Kueue jobs go through a whole
// admission/start/finish cycle on a MultiKueue estate of two clusters — the manager's Workload,
// its copy on the worker, and the job's pods on the worker — while the worker's DRA driver keeps
// republishing its ResourceSlices. Objects are compact JSON of 4–6 KB, shaped and padded like
// what the API server sends (labels, annotations, env, volumes, managedFields), so that the
// decoders skip as much as they do in production.
//
// Events are generated and measured in chunks, so memory stays bounded (~10 MB per chunk)
// whatever --events is; each chunk is timed three times over the same bytes: the reference
// extraction, decode only, then decode + MilestoneEngine::onObject (+ advance every 500 events).
// CPU time (CLOCK_THREAD_CPUTIME_ID) is the headline figure because the machine may be shared;
// wall time is printed alongside.
//
// The decoders run with the daemon's options (model::DecodeOptions: of a device's attributes,
// only those its inventory reads), and the reference extracts the same fields (change 115);
// --all-attributes decodes and extracts every attribute, as this benchmark did before.
#include <simdjson.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "firstwork/core/heap.hpp"
#include "firstwork/core/rfc3339.hpp"
#include "firstwork/engine/engine_config.hpp"
#include "firstwork/engine/milestone_engine.hpp"
#include "firstwork/inventory/inventory.hpp"
#include "firstwork/model/decode.hpp"
#include "firstwork/model/object.hpp"

#include "event_mix.hpp"

namespace {

// The On-Demand kernel this file (and firstwork_model, built with the same flags) compiled in:
// simdjson::builtin_implementation() would name libsimdjson's own, not the including code's.
#define FIRSTWORK_BENCH_STR_(x) #x
#define FIRSTWORK_BENCH_STR(x) FIRSTWORK_BENCH_STR_(x)
constexpr const char* kNavigation = FIRSTWORK_BENCH_STR(SIMDJSON_BUILTIN_IMPLEMENTATION);

using firstwork::SystemTime;
namespace model = firstwork::model;
namespace engine = firstwork::engine;
namespace od = simdjson::ondemand;
using firstwork::bench::fromMs;
using firstwork::bench::Generator;
using firstwork::bench::kManager;
using firstwork::bench::kWorker;
using firstwork::bench::Line;
using firstwork::bench::toMs;

constexpr int kAdvanceEvery = 500;

// ---------------------------------------------------------------------------------------------
// Reference: raw simdjson On-Demand extraction of roughly the fields the decoders keep, into
// string_views (no allocation, no timestamp/quantity parsing) — an upper bound on what any
// decoder built on simdjson can do on these bytes.
// ---------------------------------------------------------------------------------------------

struct Sink {
  uint64_t h = 0;
  uint64_t fields = 0;
  void add(std::string_view s) {
    h = h * 31 + s.size() + (s.empty() ? 0 : static_cast<uint8_t>(s.back()));
    ++fields;
  }
  void add(int64_t v) {
    h = h * 31 + static_cast<uint64_t>(v);
    ++fields;
  }
};

/// The device attributes whose values the reference extracts: those the daemon's decoders keep
/// (their names without a domain, as the decoders compare them; empty: every attribute, and the
/// devices' capacity, with --all-attributes).
std::vector<std::string> gReferenceAttributes;

bool referenceKeeps(std::string_view attribute) {
  if (gReferenceAttributes.empty()) return true;
  const size_t slash = attribute.rfind('/');
  const std::string_view bare = slash == std::string_view::npos ? attribute : attribute.substr(slash + 1);
  for (const auto& kept : gReferenceAttributes) {
    if (bare == kept) return true;
  }
  return false;
}

#define BENCH_TRY(expr) \
  do {                  \
    if ((expr)) return false; \
  } while (0)

bool str(od::value& v, Sink& s) {
  std::string_view out;
  BENCH_TRY(v.get_string().get(out));
  s.add(out);
  return true;
}

bool num(od::value& v, Sink& s) {
  int64_t out = 0;
  BENCH_TRY(v.get_int64().get(out));
  s.add(out);
  return true;
}

/// Map of strings, keeping only keys with a prefix the decoders keep.
bool filteredMap(od::value& v, Sink& s) {
  od::object o;
  BENCH_TRY(v.get_object().get(o));
  for (auto r : o) {
    od::field f;
    BENCH_TRY(std::move(r).get(f));
    std::string_view k;
    BENCH_TRY(f.unescaped_key().get(k));
    if (k.starts_with("kueue.x-k8s.io/") || k.starts_with("batch.kubernetes.io/") ||
        k.starts_with("firstwork.dev/")) {
      s.add(k);
      BENCH_TRY(!str(f.value(), s));
    }
  }
  return true;
}

/// Any map of string values (resource requests, usage).
bool stringMap(od::value& v, Sink& s) {
  od::object o;
  BENCH_TRY(v.get_object().get(o));
  for (auto r : o) {
    od::field f;
    BENCH_TRY(std::move(r).get(f));
    std::string_view k;
    BENCH_TRY(f.unescaped_key().get(k));
    s.add(k);
    BENCH_TRY(!str(f.value(), s));
  }
  return true;
}

bool metadata(od::value& v, Sink& s) {
  od::object o;
  BENCH_TRY(v.get_object().get(o));
  for (auto r : o) {
    od::field f;
    BENCH_TRY(std::move(r).get(f));
    auto k = f.key();
    if (k == "name" || k == "namespace" || k == "uid" || k == "resourceVersion" ||
        k == "creationTimestamp" || k == "deletionTimestamp") {
      BENCH_TRY(!str(f.value(), s));
    } else if (k == "generation") {
      BENCH_TRY(!num(f.value(), s));
    } else if (k == "labels" || k == "annotations") {
      BENCH_TRY(!filteredMap(f.value(), s));
    } else if (k == "ownerReferences") {
      od::array a;
      BENCH_TRY(f.value().get_array().get(a));
      for (auto e : a) {
        od::object ref;
        BENCH_TRY(e.get_object().get(ref));
        for (auto rf : ref) {
          od::field g;
          BENCH_TRY(std::move(rf).get(g));
          auto gk = g.key();
          if (gk == "kind" || gk == "name" || gk == "uid") BENCH_TRY(!str(g.value(), s));
        }
      }
    }
  }
  return true;
}

bool conditions(od::value& v, Sink& s) {
  od::array a;
  BENCH_TRY(v.get_array().get(a));
  for (auto e : a) {
    od::object c;
    BENCH_TRY(e.get_object().get(c));
    for (auto r : c) {
      od::field f;
      BENCH_TRY(std::move(r).get(f));
      auto k = f.key();
      if (k == "type" || k == "status" || k == "lastTransitionTime" || k == "reason") {
        BENCH_TRY(!str(f.value(), s));
      }
    }
  }
  return true;
}

/// containers[].resources.requests (pod spec or pod template spec).
bool containers(od::value& v, Sink& s) {
  od::array a;
  BENCH_TRY(v.get_array().get(a));
  for (auto e : a) {
    od::object c;
    BENCH_TRY(e.get_object().get(c));
    for (auto r : c) {
      od::field f;
      BENCH_TRY(std::move(r).get(f));
      auto k = f.key();
      if (k == "name") {
        BENCH_TRY(!str(f.value(), s));
      } else if (k == "resources") {
        od::object res;
        BENCH_TRY(f.value().get_object().get(res));
        for (auto rr : res) {
          od::field g;
          BENCH_TRY(std::move(rr).get(g));
          if (g.key() == "requests" || g.key() == "limits") BENCH_TRY(!stringMap(g.value(), s));
        }
      }
    }
  }
  return true;
}

bool podSpec(od::value& v, Sink& s) {
  od::object o;
  BENCH_TRY(v.get_object().get(o));
  for (auto r : o) {
    od::field f;
    BENCH_TRY(std::move(r).get(f));
    auto k = f.key();
    if (k == "containers" || k == "initContainers") {
      BENCH_TRY(!containers(f.value(), s));
    } else if (k == "nodeName" || k == "restartPolicy") {
      BENCH_TRY(!str(f.value(), s));
    }
  }
  return true;
}

bool containerStatuses(od::value& v, Sink& s) {
  od::array a;
  BENCH_TRY(v.get_array().get(a));
  for (auto e : a) {
    od::object c;
    BENCH_TRY(e.get_object().get(c));
    for (auto r : c) {
      od::field f;
      BENCH_TRY(std::move(r).get(f));
      auto k = f.key();
      if (k == "name") {
        BENCH_TRY(!str(f.value(), s));
      } else if (k == "restartCount") {
        BENCH_TRY(!num(f.value(), s));
      } else if (k == "ready") {
        bool b = false;
        BENCH_TRY(f.value().get_bool().get(b));
        s.add(int64_t{b});
      } else if (k == "state" || k == "lastState") {
        od::object st;
        BENCH_TRY(f.value().get_object().get(st));
        for (auto sr : st) {  // {"running": {...}} | {"terminated": {...}} | {"waiting": {...}}
          od::field which;
          BENCH_TRY(std::move(sr).get(which));
          s.add(which.key() == "running" ? int64_t{1} : int64_t{2});
          od::object detail;
          BENCH_TRY(which.value().get_object().get(detail));
          for (auto dr : detail) {
            od::field g;
            BENCH_TRY(std::move(dr).get(g));
            auto gk = g.key();
            if (gk == "exitCode") {
              BENCH_TRY(!num(g.value(), s));
            } else if (gk == "reason" || gk == "startedAt" || gk == "finishedAt") {
              BENCH_TRY(!str(g.value(), s));
            }
          }
        }
      }
    }
  }
  return true;
}

bool pod(od::object& o, Sink& s) {
  for (auto r : o) {
    od::field f;
    BENCH_TRY(std::move(r).get(f));
    auto k = f.key();
    if (k == "metadata") {
      BENCH_TRY(!metadata(f.value(), s));
    } else if (k == "spec") {
      BENCH_TRY(!podSpec(f.value(), s));
    } else if (k == "status") {
      od::object st;
      BENCH_TRY(f.value().get_object().get(st));
      for (auto sr : st) {
        od::field g;
        BENCH_TRY(std::move(sr).get(g));
        auto gk = g.key();
        if (gk == "phase" || gk == "startTime") {
          BENCH_TRY(!str(g.value(), s));
        } else if (gk == "conditions") {
          BENCH_TRY(!conditions(g.value(), s));
        } else if (gk == "containerStatuses" || gk == "initContainerStatuses") {
          BENCH_TRY(!containerStatuses(g.value(), s));
        }
      }
    }
  }
  return true;
}

bool workload(od::object& o, Sink& s) {
  for (auto r : o) {
    od::field f;
    BENCH_TRY(std::move(r).get(f));
    auto k = f.key();
    if (k == "metadata") {
      BENCH_TRY(!metadata(f.value(), s));
    } else if (k == "spec") {
      od::object sp;
      BENCH_TRY(f.value().get_object().get(sp));
      for (auto sr : sp) {
        od::field g;
        BENCH_TRY(std::move(sr).get(g));
        auto gk = g.key();
        if (gk == "queueName") {
          BENCH_TRY(!str(g.value(), s));
        } else if (gk == "priority") {
          BENCH_TRY(!num(g.value(), s));
        } else if (gk == "active") {
          bool b = false;
          BENCH_TRY(g.value().get_bool().get(b));
          s.add(int64_t{b});
        } else if (gk == "podSets") {
          od::array a;
          BENCH_TRY(g.value().get_array().get(a));
          for (auto e : a) {
            od::object ps;
            BENCH_TRY(e.get_object().get(ps));
            for (auto pr : ps) {
              od::field h;
              BENCH_TRY(std::move(pr).get(h));
              auto hk = h.key();
              if (hk == "name") {
                BENCH_TRY(!str(h.value(), s));
              } else if (hk == "count") {
                BENCH_TRY(!num(h.value(), s));
              } else if (hk == "template") {
                od::object tpl;
                BENCH_TRY(h.value().get_object().get(tpl));
                for (auto tr : tpl) {
                  od::field t;
                  BENCH_TRY(std::move(tr).get(t));
                  if (t.key() == "spec") BENCH_TRY(!podSpec(t.value(), s));
                }
              }
            }
          }
        }
      }
    } else if (k == "status") {
      od::object st;
      BENCH_TRY(f.value().get_object().get(st));
      for (auto sr : st) {
        od::field g;
        BENCH_TRY(std::move(sr).get(g));
        auto gk = g.key();
        if (gk == "conditions") {
          BENCH_TRY(!conditions(g.value(), s));
        } else if (gk == "clusterName") {
          BENCH_TRY(!str(g.value(), s));
        } else if (gk == "admissionChecks") {
          od::array a;
          BENCH_TRY(g.value().get_array().get(a));
          for (auto e : a) {
            od::object ac;
            BENCH_TRY(e.get_object().get(ac));
            for (auto ar : ac) {
              od::field h;
              BENCH_TRY(std::move(ar).get(h));
              auto hk = h.key();
              if (hk == "name" || hk == "state" || hk == "lastTransitionTime") BENCH_TRY(!str(h.value(), s));
            }
          }
        } else if (gk == "admission") {
          od::object ad;
          BENCH_TRY(g.value().get_object().get(ad));
          for (auto ar : ad) {
            od::field h;
            BENCH_TRY(std::move(ar).get(h));
            if (h.key() == "clusterQueue") {
              BENCH_TRY(!str(h.value(), s));
            } else if (h.key() == "podSetAssignments") {
              od::array a;
              BENCH_TRY(h.value().get_array().get(a));
              for (auto e : a) {
                od::object psa;
                BENCH_TRY(e.get_object().get(psa));
                for (auto pr : psa) {
                  od::field t;
                  BENCH_TRY(std::move(pr).get(t));
                  auto tk = t.key();
                  if (tk == "name") {
                    BENCH_TRY(!str(t.value(), s));
                  } else if (tk == "count") {
                    BENCH_TRY(!num(t.value(), s));
                  } else if (tk == "flavors" || tk == "resourceUsage") {
                    BENCH_TRY(!stringMap(t.value(), s));
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return true;
}

bool slice(od::object& o, Sink& s) {
  for (auto r : o) {
    od::field f;
    BENCH_TRY(std::move(r).get(f));
    auto k = f.key();
    if (k == "metadata") {
      BENCH_TRY(!metadata(f.value(), s));
    } else if (k == "spec") {
      od::object sp;
      BENCH_TRY(f.value().get_object().get(sp));
      for (auto sr : sp) {
        od::field g;
        BENCH_TRY(std::move(sr).get(g));
        auto gk = g.key();
        if (gk == "driver" || gk == "nodeName") {
          BENCH_TRY(!str(g.value(), s));
        } else if (gk == "pool") {
          od::object pool;
          BENCH_TRY(g.value().get_object().get(pool));
          for (auto pr : pool) {
            od::field h;
            BENCH_TRY(std::move(pr).get(h));
            if (h.key() == "name") {
              BENCH_TRY(!str(h.value(), s));
            } else {
              BENCH_TRY(!num(h.value(), s));
            }
          }
        } else if (gk == "devices") {
          od::array a;
          BENCH_TRY(g.value().get_array().get(a));
          for (auto e : a) {
            od::object dev;
            BENCH_TRY(e.get_object().get(dev));
            for (auto dr : dev) {
              od::field h;
              BENCH_TRY(std::move(dr).get(h));
              auto hk = h.key();
              if (hk == "name") {
                BENCH_TRY(!str(h.value(), s));
              } else if (hk == "attributes" ||
                         (hk == "capacity" && gReferenceAttributes.empty())) {
                od::object attrs;
                BENCH_TRY(h.value().get_object().get(attrs));
                for (auto ar : attrs) {  // "productName": {"string": "..."}
                  od::field a1;
                  BENCH_TRY(std::move(ar).get(a1));
                  std::string_view ak;
                  BENCH_TRY(a1.unescaped_key().get(ak));
                  if (!referenceKeeps(ak)) continue;  // as the decoder: its value is not read
                  s.add(ak);
                  od::object typed;
                  BENCH_TRY(a1.value().get_object().get(typed));
                  for (auto tr : typed) {
                    od::field t;
                    BENCH_TRY(std::move(tr).get(t));
                    BENCH_TRY(!str(t.value(), s));
                  }
                }
              } else if (hk == "taints") {
                od::array ta;
                BENCH_TRY(h.value().get_array().get(ta));
                for (auto te : ta) {
                  od::object taint;
                  BENCH_TRY(te.get_object().get(taint));
                  for (auto tr : taint) {
                    od::field t;
                    BENCH_TRY(std::move(tr).get(t));
                    BENCH_TRY(!str(t.value(), s));
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return true;
}

/// The whole event: `type`, then the object of `kind`. Pads `line` in place as the decoder does.
bool referenceExtract(od::parser& parser, std::string& line, model::Kind kind, Sink& s) {
  const size_t len = line.size();
  line.append(simdjson::SIMDJSON_PADDING, ' ');
  bool ok = [&] {
    od::document doc;
    BENCH_TRY(parser.iterate(line.data(), len, line.size()).get(doc));
    od::object top;
    BENCH_TRY(doc.get_object().get(top));
    for (auto r : top) {
      od::field f;
      BENCH_TRY(std::move(r).get(f));
      if (f.key() == "type") {
        BENCH_TRY(!str(f.value(), s));
      } else if (f.key() == "object") {
        od::object o;
        BENCH_TRY(f.value().get_object().get(o));
        switch (kind) {
          case model::Kind::Pod: BENCH_TRY(!pod(o, s)); break;
          case model::Kind::Workload: BENCH_TRY(!workload(o, s)); break;
          case model::Kind::ResourceSlice: BENCH_TRY(!slice(o, s)); break;
          default: return false;
        }
      }
    }
    return true;
  }();
  line.resize(len);
  return ok;
}

// ---------------------------------------------------------------------------------------------
// Timing.
// ---------------------------------------------------------------------------------------------

double cpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Timer {
  double cpu = 0, wall = 0;
  double c0 = 0, w0 = 0;
  void start() {
    w0 = wallSeconds();
    c0 = cpuSeconds();
  }
  void stop() {
    cpu += cpuSeconds() - c0;
    wall += wallSeconds() - w0;
  }
};

std::string firstLine(const std::string& path, std::string_view prefix) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(prefix)) {
      size_t colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "unknown";
}

int usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--events N] [--smoke] [--dump] [--engine-only] [--plain-pods N] "
               "[--all-attributes] [--daemonset-pods N]\n",
               argv0);
  return 2;
}

/// CPU seconds an engine of its own takes to take `n` pods of one DaemonSet on a worker: pods no
/// Workload claims, all under their owner's key among the waiting pods' keys.
double takeDaemonSetPods(int64_t n, SystemTime t0) {
  engine::EngineConfig config;
  config.clusters.push_back({std::string(kWorker), engine::ClusterRole::Worker, ""});
  engine::MilestoneEngine eng(config);
  std::vector<std::shared_ptr<const model::Object>> pods;
  pods.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    model::Pod p;
    p.meta.namespace_ = "gpu-operator";
    p.meta.name = fmt::format("nvidia-dcgm-exporter-{}", i);
    p.meta.uid = fmt::format("00000000-0000-4000-9000-{:012x}", i);
    p.meta.creationTimestamp = t0;
    p.meta.ownerReferences.push_back(
        {"DaemonSet", "nvidia-dcgm-exporter", "7a9e0c11-2222-4333-8444-555566667777"});
    p.nodeName = fmt::format("gpu-node-{}", i);
    p.phase = model::PodPhase::Running;
    pods.push_back(std::make_shared<const model::Object>(std::move(p)));
  }
  const double c0 = cpuSeconds();
  for (auto& p : pods) eng.onObject(kWorker, model::EventType::Added, std::move(p), t0);
  (void)eng.advance(t0);
  const double cpu = cpuSeconds() - c0;
  if (eng.snapshot().stats.unresolvedPods != static_cast<uint64_t>(n)) {
    std::fprintf(stderr, "error: %llu of %lld DaemonSet pods waiting\n",
                 static_cast<unsigned long long>(eng.snapshot().stats.unresolvedPods),
                 static_cast<long long>(n));
    std::exit(1);
  }
  return cpu;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t events = 200'000;
  bool dump = false;
  bool engineOnly = false;  // skips the reference and decode-only passes (for profiling)
  // Decode every device attribute, and extract every attribute and the devices' capacity in the
  // reference (benchmark 1 before change 115), not only what the daemon's decoders keep.
  bool allAttributes = false;
  // Pods no Workload will own (a namespace's Deployments, notebooks), waiting in each of the
  // stream's six namespaces from the start: what each new Workload's retry of waiting pods costs.
  int64_t plainPods = 0;
  // Pods of one DaemonSet, taken by an engine of their own: N, then 4 N (0: not measured).
  int64_t daemonSetPods = 0;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--dump") {
      dump = true;
    } else if (a == "--engine-only") {
      engineOnly = true;
    } else if (a == "--all-attributes") {
      allAttributes = true;
    } else if (a == "--plain-pods" && i + 1 < argc) {
      char* end = nullptr;
      plainPods = std::strtoll(argv[++i], &end, 10);
      if (end == nullptr || *end != '\0' || plainPods < 0) return usage(argv[0]);
    } else if (a == "--daemonset-pods" && i + 1 < argc) {
      char* end = nullptr;
      daemonSetPods = std::strtoll(argv[++i], &end, 10);
      if (end == nullptr || *end != '\0' || daemonSetPods < 0) return usage(argv[0]);
    } else if (a == "--smoke") {
      events = 2'000;
      daemonSetPods = 250;
    } else if (a == "--events" && i + 1 < argc) {
      char* end = nullptr;
      events = std::strtoll(argv[++i], &end, 10);
      if (end == nullptr || *end != '\0' || events <= 0) return usage(argv[0]);
    } else {
      return usage(argv[0]);
    }
  }

  auto startTime = firstwork::parseRfc3339("2026-08-20T10:00:00Z");
  if (!startTime) {
    std::fprintf(stderr, "bad start time: %s\n", startTime.error().c_str());
    return 1;
  }
  engine::EngineConfig config;
  config.clusters.push_back({std::string(kManager), engine::ClusterRole::Management, ""});
  config.clusters.push_back({std::string(kWorker), engine::ClusterRole::Worker, ""});
  engine::MilestoneEngine eng(config);
  // The decoders keep what the daemon's keep: of a device's attributes, those its inventory
  // reads (the NVIDIA driver's type and profile under the defaults; bench/README.md, change 78).
  // The reference extracts the same.
  model::DecodeOptions decodeOptions;
  if (!allAttributes) {
    decodeOptions.deviceAttributes = firstwork::inventory::deviceAttributesRead(config.inventory);
    for (const auto& name : *decodeOptions.deviceAttributes) {
      const size_t slash = name.rfind('/');
      gReferenceAttributes.push_back(slash == std::string::npos ? name : name.substr(slash + 1));
    }
  }
  const SystemTime t0 = *startTime;
  for (std::string_view c : {kManager, kWorker}) {
    eng.onConnection(c, false, t0, t0);
    eng.onConnection(c, true, t0, t0);
  }
  (void)eng.advance(t0);
  for (int64_t i = 0; i < plainPods * 6; ++i) {
    model::Pod p;
    p.meta.namespace_ = fmt::format("team-{}", static_cast<char>('a' + i % 6));
    p.meta.name = fmt::format("web-{}", i);
    p.meta.uid = fmt::format("00000000-0000-4000-8000-{:012x}", i);
    p.meta.creationTimestamp = t0;
    eng.onObject(kWorker, model::EventType::Added,
                 std::make_shared<const model::Object>(std::move(p)), t0);
  }

  Generator gen(t0);
  if (dump) {
    // Prints the first `events` generated lines (JSON lines) instead of measuring.
    Line l;
    for (int64_t i = 0; i < events; ++i) {
      gen.next(l);
      std::printf("%s\n", l.text.c_str());
    }
    return 0;
  }
  od::parser parser;
  constexpr int64_t kChunk = 2'000;
  std::vector<Line> chunk(static_cast<size_t>(std::min(kChunk, events)));
  Timer tRef, tDecode, tEngine;
  Sink sink;
  int64_t done = 0, refErrors = 0, decodeErrors = 0, engineEvents = 0, milestones = 0;
  int64_t lastObserved = toMs(t0);
  size_t bytes = 0;
  std::string firstDecodeError;

  constexpr int64_t kSegment = 20'000;
  std::vector<std::string> segments;
  int64_t segmentStart = 0;
  double segmentCpu = 0;
  while (done < events) {
    const size_t n = static_cast<size_t>(std::min<int64_t>(kChunk, events - done));
    for (size_t i = 0; i < n; ++i) {
      gen.next(chunk[i]);
      bytes += chunk[i].text.size();
    }

    if (!engineOnly) {
      // (a) reference: raw simdjson extraction.
      tRef.start();
      for (size_t i = 0; i < n; ++i) {
        if (!referenceExtract(parser, chunk[i].text, chunk[i].kind, sink)) ++refErrors;
      }
      tRef.stop();

      // (b) decode only.
      tDecode.start();
      for (size_t i = 0; i < n; ++i) {
        auto ev = model::decodeWatchEvent(chunk[i].text, chunk[i].kind, decodeOptions);
        if (!ev || !ev->object) {
          ++decodeErrors;
          if (firstDecodeError.empty()) firstDecodeError = ev ? ev->decodeError : ev.error();
        }
      }
      tDecode.stop();
    }

    // (c) decode + engine, advancing every kAdvanceEvery events like the daemon's event loop.
    tEngine.start();
    for (size_t i = 0; i < n; ++i) {
      Line& l = chunk[i];
      auto ev = model::decodeWatchEvent(l.text, l.kind, decodeOptions);
      if (ev && ev->object) {
        // As the daemon does: the reflector's shared object, kept by the engine without a copy.
        eng.onObject(l.manager ? kManager : kWorker, ev->type,
                     std::make_shared<const model::Object>(std::move(*ev->object)), fromMs(l.observedMs));
      }
      lastObserved = l.observedMs;
      if (++engineEvents % kAdvanceEvery == 0) {
        milestones += static_cast<int64_t>(eng.advance(fromMs(lastObserved)).milestones.size());
      }
    }
    tEngine.stop();
    done += static_cast<int64_t>(n);
    // The engine's marginal cost along the run: flat when per-event work does not grow with
    // the retained state (the slowdown this benchmark used to show).
    if (done % kSegment == 0 || done == events) {
      const double segEvents = static_cast<double>(done - segmentStart);
      segments.push_back(fmt::format("{}k:{:.1f}", done / 1000, (tEngine.cpu - segmentCpu) / segEvents * 1e6));
      segmentStart = done;
      segmentCpu = tEngine.cpu;
    }
  }
  milestones += static_cast<int64_t>(eng.advance(fromMs(lastObserved)).milestones.size());

  const double mb = static_cast<double>(bytes) / 1e6;
  const double ev = static_cast<double>(events);
  auto row = [&](const char* name, const Timer& t) {
    std::printf("%-32s %12.0f %12.0f %10.2f %10.1f\n", name, ev / t.cpu, ev / t.wall, t.cpu / ev * 1e6,
                mb / t.cpu);
  };
  std::printf("firstwork_engine_bench: %lld events, %.1f MB JSON (avg %.0f B/event)\n",
              static_cast<long long>(events), mb, static_cast<double>(bytes) / ev);
  if (plainPods > 0) {
    std::printf(
        "  with %lld plain pods (no Workload owns them) waiting in each of the 6 namespaces\n",
        static_cast<long long>(plainPods));
  }
  static constexpr std::array<const char*, 3> kKinds = {"pods", "workloads", "slices"};
  const auto& mix = gen.stats();
  for (size_t k = 0; k < 3; ++k) {
    if (mix.counts[k] == 0) continue;
    std::printf("  %-9s %7zu events (%4.1f%%), object JSON min/avg/max %zu / %.0f / %zu B\n", kKinds[k],
                mix.counts[k], 100.0 * static_cast<double>(mix.counts[k]) / ev, mix.minBytes[k],
                static_cast<double>(mix.bytes[k]) / static_cast<double>(mix.counts[k]), mix.maxBytes[k]);
  }
  // On-Demand's navigation (stage 2) is inlined and compiled for the -m flags of the including
  // file — here and in firstwork_model alike — while stage 1 runs in libsimdjson, dispatched at
  // runtime.
  std::printf("simdjson On-Demand: navigation compiled for %s, stage 1 (runtime-dispatched) %s; heap: %s\n",
              kNavigation,
              std::string(simdjson::get_active_implementation()->name()).c_str(),
              firstwork::heapAllocatorName().c_str());
  if (allAttributes) {
    std::printf("device attributes: every one decoded and extracted, and capacity (--all-attributes)\n");
  } else {
    std::string kept;
    for (const auto& name : gReferenceAttributes) kept += (kept.empty() ? "" : ", ") + name;
    std::printf("device attributes: those the daemon keeps (%s), in the decoders and the reference\n",
                kept.c_str());
  }
  std::printf("cpu: %s, nproc %d\n\n", firstLine("/proc/cpuinfo", "model name").c_str(),
              static_cast<int>(std::max<long>(1, sysconf(_SC_NPROCESSORS_ONLN))));
  std::printf("%-32s %12s %12s %10s %10s\n", "pass (single thread)", "ev/s (cpu)", "ev/s (wall)",
              "us/ev cpu", "MB/s cpu");
  row("raw simdjson extraction (ref)", tRef);
  row("decodeWatchEvent", tDecode);
  row("decodeWatchEvent + engine", tEngine);
  std::printf("decode+engine us/event (cpu) per segment of the run:");
  for (const auto& seg : segments) std::printf(" %s", seg.c_str());
  std::printf("\n");
  const double ratioDecode = tRef.cpu / tDecode.cpu;
  const double ratioEngine = tRef.cpu / tEngine.cpu;
  const double perCore = ev / tEngine.cpu;
  std::printf("\nratio decode / reference:          %.2f\n", ratioDecode);
  std::printf("ratio decode+engine / reference:   %.2f  (goal >= 0.60: %s)\n", ratioEngine,
              ratioEngine >= 0.6 ? "met" : "NOT met");
  std::printf("decode+engine events/s per core:   %.0f  (goal >= 100000: %s)\n", perCore,
              perCore >= 100'000 ? "met" : "NOT met");
  std::printf("engine milestones produced: %lld; reference fields extracted: %llu (checksum %llx)\n",
              static_cast<long long>(milestones), static_cast<unsigned long long>(sink.fields),
              static_cast<unsigned long long>(sink.h));
  if (daemonSetPods > 0) {
    // Linear scaling reads 1.00; a cost per pod that grows with the DaemonSet's size (each pod
    // found among all the others under their owner's key) reads about 4.
    const double small = takeDaemonSetPods(daemonSetPods, t0);
    const double large = takeDaemonSetPods(4 * daemonSetPods, t0);
    const double perPodSmall = small / static_cast<double>(daemonSetPods);
    const double perPodLarge = large / static_cast<double>(4 * daemonSetPods);
    std::printf("\npods of one DaemonSet (no Workload claims them), an engine of their own:\n");
    std::printf("  %8lld pods: %10.0f pods/s (cpu)\n", static_cast<long long>(daemonSetPods),
                1 / perPodSmall);
    std::printf("  %8lld pods: %10.0f pods/s (cpu)\n", static_cast<long long>(4 * daemonSetPods),
                1 / perPodLarge);
    std::printf("  ratio of the cost per pod, 4x the pods / 1x: %.2f (linear: 1.00)\n",
                perPodLarge / perPodSmall);
  }
  // A benchmark of lines that do not decode measures nothing: fail loudly (this is also what the
  // smoke test guards — that the generated mix stays valid for the decoders).
  if (refErrors != 0 || decodeErrors != 0) {
    std::fprintf(stderr, "error: %lld reference failures, %lld decode failures (first: %s)\n",
                 static_cast<long long>(refErrors), static_cast<long long>(decodeErrors),
                 firstDecodeError.c_str());
    return 1;
  }
  if (milestones == 0) {
    std::fprintf(stderr, "error: the engine produced no milestones: the event mix is not realistic\n");
    return 1;
  }
  return 0;
}
