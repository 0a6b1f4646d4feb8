// Logging: one line per event, via fmt. Never per query at the default level (doc/design.md "Principles" 7).
//
// Sinks ([server] log):
// - stderr (default): "2026-01-01T00:00:00.000Z gslbd info: message". Under systemd, when stderr is the
//   journal's stream (JOURNAL_STREAM names its device and inode, systemd.exec(5)), the line is
//   "<6>info: message" instead: the sd-daemon(3) prefix gives the journal each line's priority, and the
//   journal adds its own time stamp and identifier.
// - syslog: syslog(3) with facility daemon, identifier "gslbd", the pid; the socket is opened at once
//   (LOG_NDELAY), before privileges are dropped or a sandbox could hide /dev/log.
#pragma once
#include <fmt/format.h>
#include <sys/stat.h>
#include <syslog.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace gslb::log {

enum class Level { Debug, Info, Warn, Error };
inline Level threshold = Level::Info;

enum class Sink { Stderr, Journal, Syslog };

/// True when fd 2 is the stream JOURNAL_STREAM ("DEV:INODE") describes: a child that inherited the variable
/// but not the stream (stderr redirected to a file) keeps the plain format.
inline bool stderrIsJournal() {
    const char* js = getenv("JOURNAL_STREAM");
    if (!js) return false;
    unsigned long long dev = 0, ino = 0;
    if (sscanf(js, "%llu:%llu", &dev, &ino) != 2) return false;
    struct stat st;
    if (fstat(2, &st) != 0) return false;
    return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

inline Sink& sink() {
    static Sink s = stderrIsJournal() ? Sink::Journal : Sink::Stderr;
    return s;
}

/// Sends every later line to syslog (call once at start-up, before other threads log).
inline void useSyslog() {
    openlog("gslbd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
    sink() = Sink::Syslog;
}

/// The syslog / sd-daemon priority of a level (RFC 5424 §6.2.1).
inline int priority(Level lv) {
    static const int p[] = {LOG_DEBUG, LOG_INFO, LOG_WARNING, LOG_ERR};
    return p[int(lv)];
}

inline void line(Level lv, std::string_view msg) {
    if (lv < threshold) return;
    static const char* names[] = {"debug", "info", "warning", "error"};
    Sink s = sink();
    if (s == Sink::Syslog) {
        syslog(priority(lv), "%s: %.*s", names[int(lv)], int(msg.size()), msg.data());
        return;
    }
    std::string out;
    if (s == Sink::Journal) {
        out = fmt::format("<{}>{}: {}\n", priority(lv), names[int(lv)], msg);
    } else {
        timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        tm t;
        gmtime_r(&ts.tv_sec, &t);
        out = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z gslbd {}: {}\n", t.tm_year + 1900,
                          t.tm_mon + 1, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, ts.tv_nsec / 1000000,
                          names[int(lv)], msg);
    }
    // One fwrite per line: lines from several threads never interleave inside a line.
    fwrite(out.data(), 1, out.size(), stderr);
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
