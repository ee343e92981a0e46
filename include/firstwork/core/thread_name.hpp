#pragma once

#include <string>

namespace firstwork {

/// Names the calling thread as `top -H`, `ps -L`, `perf` and /proc/<pid>/task/<tid>/comm show it
/// (Linux keeps 15 bytes; a longer name is cut there). Threads started from a named thread
/// inherit its name: name a thread before it starts the ones it owns (an HTTP server's accept
/// thread before its pool), or after, to tell them apart.
void nameThisThread(const std::string& name);

/// The calling thread's name ("" if the system cannot tell).
std::string thisThreadName();

}  // namespace firstwork
