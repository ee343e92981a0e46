#pragma once
#include <string>
#include <vector>

#include "firstwork/core/result.hpp"
#include "firstwork/report/report.hpp"

// Report layer 3: the figures as files. Every renderer is pure and deterministic: the same Report
// gives the same bytes (no clock reads, no locale), so outputs can be kept as golden files.
namespace firstwork::report {

/// One output file: a name relative to the output directory, and its contents.
struct OutputFile {
  std::string name;
  std::string content;
};

/// report.md, and beside it the SVG plots it links: a recovery curve per reconnection incident
/// (recovery-<k>-<worker>.svg, with the baseline counterpart's curve when comparing) and the
/// latency distributions (latency-<metric>[-<part>].svg).
std::vector<OutputFile> renderMarkdown(const Report& report);
/// One CSV file per table (RFC 4180; times RFC 3339 UTC; durations in seconds; GPU-hours):
/// incidents.csv, telemetry_gaps.csv, reclaims.csv, latency.csv, gpu_hours.csv, capacity.csv,
/// and with a baseline comparison_incidents.csv and comparison_reclaims.csv.
std::vector<OutputFile> renderCsv(const Report& report);
/// report.json: every figure in base units (seconds, GPU-seconds), with the same structure as
/// the Markdown.
OutputFile renderJson(const Report& report);

/// The SVG plots alone (what renderMarkdown writes beside report.md).
std::vector<OutputFile> renderPlots(const Report& report);

enum class Format { Markdown, Csv, Json };

/// Renders `formats` and writes the files into `dir` (created when missing). Returns the paths
/// written, in order; an error names the file that could not be written.
Result<std::vector<std::string>> writeReport(const Report& report,
                                             const std::vector<Format>& formats,
                                             const std::string& dir);

}  // namespace firstwork::report
