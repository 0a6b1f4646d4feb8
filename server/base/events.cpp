#include "server/base/events.hpp"

#include "server/base/clock.hpp"

namespace gslb::server {

uint64_t EventLog::record(log::Level level, std::string_view kind, std::string subject, std::string message,
                          int64_t unixMs) {
    if (unixMs == 0) unixMs = wallMs();
    std::lock_guard<std::mutex> g(m_);
    if (ring_.size() >= capacity_) {
        ring_.pop_front();
        ++dropped_;
    }
    ring_.push_back(Event{++seq_, unixMs, level, std::string(kind), std::move(subject), std::move(message)});
    return seq_;
}

std::vector<Event> EventLog::since(uint64_t afterSeq, size_t limit) const {
    std::lock_guard<std::mutex> g(m_);
    // Sequence numbers are consecutive inside the ring, so the first wanted one is found by arithmetic.
    size_t first = 0;
    if (!ring_.empty() && afterSeq >= ring_.front().seq)
        first = size_t(std::min<uint64_t>(afterSeq - ring_.front().seq + 1, ring_.size()));
    size_t n = ring_.size() - first;
    if (n > limit) first += n - limit;
    return std::vector<Event>(ring_.begin() + long(first), ring_.end());
}

uint64_t EventLog::lastSeq() const {
    std::lock_guard<std::mutex> g(m_);
    return seq_;
}

uint64_t EventLog::dropped() const {
    std::lock_guard<std::mutex> g(m_);
    return dropped_;
}

void EventLog::clear() {
    std::lock_guard<std::mutex> g(m_);
    ring_.clear();
}

EventLog& eventLog() {
    static EventLog log;
    return log;
}

const char* levelName(log::Level level) {
    static const char* names[] = {"debug", "info", "warning", "error"};
    return names[int(level)];
}

}  // namespace gslb::server
