#pragma once
// Text forms of the report's figures, shared by the Markdown, CSV and SVG renderers and the
// comparison's callouts, so one figure reads the same everywhere. Deterministic (no locale).
#include <optional>
#include <string>

#include "firstwork/core/clock.hpp"

namespace firstwork::report::detail {

/// "45s", "45.5s", "8m 00s", "1h 02m 03s" (rounded to whole seconds from a minute on).
std::string duration(double seconds);
/// "—" for nullopt, else duration().
std::string duration(const std::optional<double>& seconds);
/// Fixed decimals, "-0.0" printed as "0.0".
std::string fixed(double value, int decimals);
/// GPU-seconds as GPU-minutes with one decimal ("320.0") or GPU-hours with two ("5.33").
std::string gpuMinutes(double gpuSeconds);
std::string gpuHours(double gpuSeconds);
/// "US$12.80"; negative amounts "-US$12.80".
std::string money(const std::string& currency, double amount);
/// "60.0 %".
std::string percent(double value);
/// Offset of `t` from reconnection `r`: "R+8m 00s", "R-30s".
std::string offset(SystemTime t, SystemTime r);
/// Keeps [A-Za-z0-9._-], maps anything else to '-' (file names from cluster names).
std::string fileSafe(const std::string& text);

}  // namespace firstwork::report::detail
