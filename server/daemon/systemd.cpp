#include "server/daemon/systemd.hpp"

#include <fmt/format.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include <cstdint>

namespace gslb::server::service {

void notifyReady(std::string_view status) {
    sd_notify(0, fmt::format("READY=1\nSTATUS={}", status).c_str());
}

void notifyReloading() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t usec = uint64_t(ts.tv_sec) * 1000000 + uint64_t(ts.tv_nsec) / 1000;
    sd_notify(0, fmt::format("RELOADING=1\nMONOTONIC_USEC={}\nSTATUS=reloading", usec).c_str());
}

void notifyStopping() {
    sd_notify(0, "STOPPING=1\nSTATUS=stopping");
}

}  // namespace gslb::server::service
