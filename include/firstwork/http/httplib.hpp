#pragma once
// cpp-httplib as Debian's libcpp-httplib builds it. Include this, not <httplib.h>: the library
// is compiled with the flags its pkg-config file gives (link PkgConfig::httplib), and a
// translation unit compiled without them sees other class layouts. Without
// CPPHTTPLIB_OPENSSL_SUPPORT an httplib::Client is 8 bytes where the library's constructor
// writes 16, over whatever sits next to it (a test's stack was corrupted so; bench/README.md
// and the session-40 note). The check below makes that a compile error.
#include <httplib.h>

#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
#error "httplib.h included without libcpp-httplib's flags: link PkgConfig::httplib"
#endif
