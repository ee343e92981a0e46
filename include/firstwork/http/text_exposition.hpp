#pragma once
#include <string>
#include <vector>

namespace prometheus {
struct MetricFamily;
}

namespace firstwork::http {

/// Text exposition format 0.0.4 of `families`, byte for byte what prometheus-cpp's
/// TextSerializer writes (Debian 12's 1.0.1: values as printf's `%.16g`, `Nan`, `+Inf`, `-Inf`;
/// label values escaped, HELP as it is), into one string.
///
/// Why not the library's serializer: it writes through std::ostream one label character at a
/// time, and was three quarters of each /metrics rendering on the event loop (10 ms at the
/// benchmark's scale-0.2 estate; bench/README.md, change 42). tests/unit/http/text_exposition_test.cpp
/// holds this to the library's output on every metric type and on edge values.
std::string serializeText(const std::vector<prometheus::MetricFamily>& families);

}  // namespace firstwork::http
