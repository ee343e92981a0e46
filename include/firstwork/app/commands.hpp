#pragma once
#include <iosfwd>

namespace firstwork::config {
struct DemoArgs;
}

namespace firstwork::app {

/// Parses the command line and runs the command (`run`, `check-config`, `demo`, `report`,
/// `--help`, `--version`); returns a config::kExit* code (0 success, 1 runtime failure, 2 usage
/// or configuration error). Expects SIGINT/SIGTERM to be blocked in every thread (main does it).
int runCommandLine(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

/// `firstworkd demo`: the embedded simulated estate (src/app/demo.cpp).
int runDemo(const config::DemoArgs& args, std::ostream& out, std::ostream& err);

}  // namespace firstwork::app
