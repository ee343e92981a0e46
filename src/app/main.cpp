// firstworkd: argv, signals and exit codes only; everything else is in the app library.
#include <signal.h>

#include <cstdio>
#include <iostream>

#include "firstwork/app/commands.hpp"
#include "firstwork/config/cli.hpp"

int main(int argc, char** argv) {
  // Block the shutdown signals before any thread starts, so every thread inherits the mask and
  // the main thread alone takes them with sigwait().
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return firstwork::app::runCommandLine(argc, argv, std::cout, std::cerr);
}
