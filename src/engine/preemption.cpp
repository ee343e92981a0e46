#include "firstwork/engine/preemption.hpp"

#include <array>
#include <utility>

namespace firstwork::engine {

namespace {

constexpr std::string_view kHead = "Preempted to accommodate a workload (UID: ";
constexpr std::string_view kPreviously = "Previously: ";

// HumanReadablePreemptionReasons (pkg/scheduler/preemption/preemption.go), longest first so
// that "reclamation within the cohort while borrowing" is not taken for its prefix.
constexpr std::array<std::pair<std::string_view, PreemptionReason>, 4> kReasonTexts{{
    {"reclamation within the cohort while borrowing", PreemptionReason::InCohortReclaimWhileBorrowing},
    {"reclamation within the cohort", PreemptionReason::InCohortReclamation},
    {"Fair Sharing within the cohort", PreemptionReason::InCohortFairSharing},
    {"prioritization in the ClusterQueue", PreemptionReason::InClusterQueue},
}};

constexpr std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::string uidValue(std::string_view s) {
  s = trim(s);
  if (s == "UNKNOWN") return {};
  return std::string(s);
}

// Text up to the next "; " field separator (or the end).
std::string_view field(std::string_view rest) {
  auto semi = rest.find(';');
  return trim(semi == std::string_view::npos ? rest : rest.substr(0, semi));
}

}  // namespace

std::string_view preemptionReasonName(PreemptionReason reason) {
  switch (reason) {
    case PreemptionReason::InClusterQueue: return "InClusterQueue";
    case PreemptionReason::InCohortReclamation: return "InCohortReclamation";
    case PreemptionReason::InCohortReclaimWhileBorrowing: return "InCohortReclaimWhileBorrowing";
    case PreemptionReason::InCohortFairSharing: return "InCohortFairSharing";
    case PreemptionReason::InCohort: return "InCohort";
    case PreemptionReason::Unknown: break;
  }
  return {};
}

PreemptionReason preemptionReasonFromCondition(std::string_view reason) {
  for (auto r : {PreemptionReason::InClusterQueue, PreemptionReason::InCohortReclamation,
                 PreemptionReason::InCohortReclaimWhileBorrowing,
                 PreemptionReason::InCohortFairSharing, PreemptionReason::InCohort}) {
    if (reason == preemptionReasonName(r)) return r;
  }
  return PreemptionReason::Unknown;
}

bool isReclaim(PreemptionReason reason) {
  return reason == PreemptionReason::InCohortReclamation ||
         reason == PreemptionReason::InCohortReclaimWhileBorrowing ||
         reason == PreemptionReason::InCohortFairSharing || reason == PreemptionReason::InCohort;
}

std::optional<PreemptionMessage> parsePreemptionMessage(std::string_view message) {
  PreemptionMessage out;
  auto head = message.find(kHead);
  if (head == std::string_view::npos) return std::nullopt;
  auto before = trim(message.substr(0, head));
  // Re-admission keeps the old text behind "Previously: " (possibly more than once).
  constexpr std::string_view kMark = trim(kPreviously);
  out.previously = before.size() >= kMark.size() &&
                   before.substr(before.size() - kMark.size()) == kMark;
  std::string_view rest = message.substr(head + kHead.size());
  auto close = rest.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view ids = rest.substr(0, close);
  constexpr std::string_view kJob = ", JobUID: ";
  if (auto j = ids.find(kJob); j != std::string_view::npos) {
    out.preemptorUid = uidValue(ids.substr(0, j));
    out.jobUid = uidValue(ids.substr(j + kJob.size()));
  } else {
    out.preemptorUid = uidValue(ids);
  }
  rest = rest.substr(close + 1);

  constexpr std::string_view kDueTo = " due to ";
  constexpr std::string_view kInThe = " in the ";
  if (rest.substr(0, kDueTo.size()) == kDueTo) {
    out.reasonText = std::string(field(rest.substr(kDueTo.size())));
    for (const auto& [text, reason] : kReasonTexts) {
      if (out.reasonText == text) {
        out.reason = reason;
        break;
      }
    }
  } else if (rest.substr(0, kInThe.size()) == kInThe) {
    // ≤ v0.7: "in the ClusterQueue" / "in the cohort".
    out.reasonText = std::string(field(rest.substr(kInThe.size())));
    if (out.reasonText == "ClusterQueue") {
      out.reason = PreemptionReason::InClusterQueue;
    } else if (out.reasonText == "cohort") {
      out.reason = PreemptionReason::InCohort;
    }
  }

  constexpr std::string_view kPreemptor = "; preemptor path: ";
  constexpr std::string_view kPreemptee = "; preemptee path: ";
  if (auto p = rest.find(kPreemptor); p != std::string_view::npos) {
    out.preemptorPath = std::string(field(rest.substr(p + kPreemptor.size())));
  }
  if (auto p = rest.find(kPreemptee); p != std::string_view::npos) {
    out.preempteePath = std::string(field(rest.substr(p + kPreemptee.size())));
  }
  return out;
}

}  // namespace firstwork::engine
