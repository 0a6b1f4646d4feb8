#include "server/responder/client_limits.hpp"

#include <netinet/in.h>

#include <cstring>

namespace gslb::server {

ClientCounter::Key ClientCounter::keyOf(const sockaddr* sa) noexcept {
    Key k;
    if (!sa) return k;
    if (sa->sa_family == AF_INET) {
        uint32_t a;
        std::memcpy(&a, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, 4);
        k.hi = 4;
        k.lo = a;
    } else if (sa->sa_family == AF_INET6) {
        const auto* a6 = &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a6)) {
            uint32_t a;
            std::memcpy(&a, a6->s6_addr + 12, 4);
            k.hi = 4;
            k.lo = a;
        } else {
            k.hi = 6;
            std::memcpy(&k.lo, a6->s6_addr, 8);  // the /64
        }
    }
    return k;
}

bool ClientCounter::acquire(const Key& client, int max) {
    if (client.hi == 0) return true;
    std::lock_guard<std::mutex> lock(mu_);
    int& n = held_[client];
    if (n >= max) {
        if (n == 0) held_.erase(client);
        return false;
    }
    ++n;
    return true;
}

void ClientCounter::release(const Key& client) {
    if (client.hi == 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(client);
    if (it == held_.end()) return;
    if (--it->second <= 0) held_.erase(it);
}

int ClientCounter::held(const Key& client) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(client);
    return it == held_.end() ? 0 : it->second;
}

}  // namespace gslb::server
