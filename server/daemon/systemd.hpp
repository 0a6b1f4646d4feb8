// The systemd notify protocol (sd_notify(3), via libsystemd) for Type=notify units (doc/operating.md):
//   READY=1      once the first health round is done and the listeners answer (not merely when bound)
//   RELOADING=1  with MONOTONIC_USEC (what systemd >= 253 asks of Type=notify-reload; 252 ignores it),
//                then READY=1 when the reload is over — whether it succeeded or kept the old snapshot
//   STOPPING=1   when SIGTERM / SIGINT begins the stop
//   STATUS=…     one line for `systemctl status`
// Without NOTIFY_SOCKET (not under systemd, or the tests) every call does nothing.
#pragma once
#include <string_view>

namespace gslb::server::service {

void notifyReady(std::string_view status);
void notifyReloading();
void notifyStopping();

}  // namespace gslb::server::service
