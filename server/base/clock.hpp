// The server's clocks, one of each: monotonic time for intervals, deadlines and ages (CLOCK_MONOTONIC, which
// std::chrono::steady_clock also reads on Linux), wall-clock time for the unix-ms stamps in the API, events
// and probe states, and libevent's timeval.
#pragma once
#include <sys/time.h>
#include <time.h>

#include <chrono>
#include <cstdint>

namespace gslb::server {

/// Monotonic milliseconds (CLOCK_MONOTONIC_COARSE: a vDSO read of the last tick, cheap enough per query; it
/// moves in steps of the kernel's tick, 1 to 4 ms). For ages, deadlines and timeouts in seconds.
inline int64_t monotonicMs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

/// Monotonic nanoseconds (CLOCK_MONOTONIC, a vDSO read to the nanosecond): RRL's buckets, whose theoretical
/// arrival times move one interval (1 s / rate: 100 us at 10,000/s) per response, finer than a tick, and the
/// AF_XDP worker's bound on waiting for its TX ring (1 ms). Read once per batch on the query path.
inline int64_t monotonicNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

/// Monotonic microseconds (the same clock, truncated): where events less than a tick apart must be ordered
/// (TCP's least-recently-active list) or a duration measured (a check's latency, a NOTIFY's round trip).
inline int64_t monotonicUs() {
    return monotonicNs() / 1000;
}

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
