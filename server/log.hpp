// Logging: one line per event on stderr (systemd and the tests read it there), via fmt. Never per query at
// the default level (STYLE.md 7).
#pragma once
#include <fmt/format.h>

#include <cstdio>
#include <ctime>

namespace gslb::log {

enum class Level { Debug, Info, Warn, Error };
inline Level threshold = Level::Info;

inline void line(Level lv, std::string_view msg) {
    if (lv < threshold) return;
    static const char* names[] = {"debug", "info", "warning", "error"};
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    tm t;
    gmtime_r(&ts.tv_sec, &t);
    // One fwrite per line: lines from several threads never interleave inside a line.
    std::string s = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z gslbd {}: {}\n", t.tm_year + 1900,
                                t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, ts.tv_nsec / 1000000,
                                names[int(lv)], msg);
    fwrite(s.data(), 1, s.size(), stderr);
}

template <class... A>
void info(fmt::format_string<A...> f, A&&... a) {
    line(Level::Info, fmt::format(f, std::forward<A>(a)...));
}
template <class... A>
void warn(fmt::format_string<A...> f, A&&... a) {
    line(Level::Warn, fmt::format(f, std::forward<A>(a)...));
}
template <class... A>
void error(fmt::format_string<A...> f, A&&... a) {
    line(Level::Error, fmt::format(f, std::forward<A>(a)...));
}

}  // namespace gslb::log
