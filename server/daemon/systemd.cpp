#include "server/daemon/systemd.hpp"

#include <fmt/format.h>
#include <systemd/sd-daemon.h>

#include <cstdint>

#include "server/base/clock.hpp"

namespace gslb::server::service {

void notifyReady(std::string_view status) {
    sd_notify(0, fmt::format("READY=1\nSTATUS={}", status).c_str());
}

void notifyReloading() {
    // sd_notify(3): MONOTONIC_USEC is CLOCK_MONOTONIC in microseconds.
    sd_notify(0, fmt::format("RELOADING=1\nMONOTONIC_USEC={}\nSTATUS=reloading", monotonicUs()).c_str());
}

void notifyStopping() {
    sd_notify(0, "STOPPING=1\nSTATUS=stopping");
}

}  // namespace gslb::server::service
