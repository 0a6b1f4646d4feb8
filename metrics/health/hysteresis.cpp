#include "metrics/health/hysteresis.hpp"

namespace gslb::metrics::health {

Hysteresis::Step Hysteresis::feed(bool success) {
    Step s;
    if (success) {
        ++okRun_;
        failRun_ = 0;
    } else {
        ++failRun_;
        okRun_ = 0;
    }
    s.run = success ? okRun_ : failRun_;
    Health next = state_;
    if (state_ == Health::Unknown) {
        next = success ? Health::Up : Health::Down;  // the first result decides (start-up)
        s.first = true;
    } else if (state_ == Health::Up && !success && failRun_ >= fall_) {
        next = Health::Down;
    } else if (state_ == Health::Down && success && okRun_ >= rise_) {
        next = Health::Up;
    }
    s.changed = next != state_;
    state_ = next;
    s.state = next;
    return s;
}

}  // namespace gslb::metrics::health
