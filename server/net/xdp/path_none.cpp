// gslbd built without libxdp/libbpf (meson -Dxdp=disabled, or their -dev packages missing): loadConfig
// refuses a non-empty `[server] xdp`, so nothing here is ever asked to attach.
#include "server/net/xdp/path.hpp"

namespace gslb::server::xdp {

struct Path::Iface {};

bool available() {
    return false;
}
int queueFd(Queue*) {
    return -1;
}
void serve(Queue*) {}
Path::Path() = default;
Path::~Path() = default;
void Path::open(const ServerConf&, const std::vector<Host>&) {}
int Path::sockets() const {
    return 0;
}
Path::Drops Path::drops() const {
    return {};
}
std::vector<Path::IfaceStatus> Path::status() const {
    return {};
}
void Path::recheck() {}
int Path::servingSockets() const {
    return 0;
}

}  // namespace gslb::server::xdp
