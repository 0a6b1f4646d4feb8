// Wall-clock time and libevent's timeval, for the control thread's timers and the unix-ms stamps in the
// API, events and probe states (the query path has monotonicMs(), gslb.hpp).
#pragma once
#include <sys/time.h>

#include <chrono>
#include <cstdint>

namespace gslb::server {

/// Milliseconds since the unix epoch (system clock: may step).
inline int64_t wallMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// s -> timeval (a negative time is 0).
inline timeval toTimeval(double s) {
    if (s < 0) s = 0;
    return timeval{time_t(s), suseconds_t((s - double(time_t(s))) * 1e6)};
}

}  // namespace gslb::server
