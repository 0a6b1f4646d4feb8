#include "server/net/notify.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "server/base/clock.hpp"
#include "server/base/log.hpp"

namespace gslb::server::xfr {
namespace {

constexpr const char* kRcodes[] = {"NOERROR",  "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED",
                                   "YXDOMAIN", "YXRRSET", "NXRRSET",  "NOTAUTH",  "NOTZONE"};

std::string rcodeText(int rc) {
    return rc >= 0 && rc <= 10 ? kRcodes[rc] : fmt::format("RCODE{}", rc);
}

void put16(uint8_t* p, uint16_t v) {
    p[0] = uint8_t(v >> 8);
    p[1] = uint8_t(v);
}

}  // namespace

size_t buildNotify(uint16_t id, std::string_view apexWire, uint32_t serial, std::span<uint8_t> out) {
    // Header, question (apex SOA IN), one answer: apex SOA with only the serial meaningful. RFC 1996 §3.7
    // allows the SOA in the answer section; a secondary may use its serial to skip a refresh. The RDATA
    // must still be a well-formed SOA: root MNAME and RNAME, the serial, then zeros.
    size_t need = 12 + apexWire.size() + 4 + 2 + 10 + 2 + 20;
    if (out.size() < need) return 0;
    uint8_t* p = out.data();
    std::memset(p, 0, need);
    put16(p, id);
    p[2] = 0x20 | 0x04;  // opcode 4 (NOTIFY) << 3, AA
    put16(p + 4, 1);     // QDCOUNT
    put16(p + 6, 1);     // ANCOUNT
    size_t off = 12;
    std::memcpy(p + off, apexWire.data(), apexWire.size());
    off += apexWire.size();
    put16(p + off, 6);  // SOA
    put16(p + off + 2, 1);
    off += 4;
    put16(p + off, 0xC00C);  // owner: the question name
    put16(p + off + 2, 6);
    put16(p + off + 4, 1);
    // TTL 0 (bytes off+6..off+9 already zero)
    put16(p + off + 10, 22);  // RDLENGTH: 1 + 1 + 5 * 4
    off += 12;
    off += 2;  // MNAME ".", RNAME "."
    p[off] = uint8_t(serial >> 24);
    p[off + 1] = uint8_t(serial >> 16);
    p[off + 2] = uint8_t(serial >> 8);
    p[off + 3] = uint8_t(serial);
    off += 20;
    return off;
}

int notifyReplyRcode(std::span<const uint8_t> r, uint16_t id) {
    if (r.size() < 12) return -1;
    if ((uint16_t(r[0]) << 8 | r[1]) != id) return -1;
    if (!(r[2] & 0x80) || ((r[2] >> 3) & 0xF) != 4) return -1;
    return r[3] & 0xF;
}

NotifyReply parseNotifyReply(std::span<const uint8_t> reply, uint16_t id, const zones::TsigSession* session,
                             uint64_t now) noexcept {
    NotifyReply r;
    r.rcode = notifyReplyRcode(reply, id);
    if (r.rcode < 0 || !session || !session->key) return r;
    zones::TsigRecord t;
    if (zones::findTsig(reply, t) == zones::TsigFind::Found && t.error != zones::kTsigNoError) {
        // The secondary's complaint (NOTAUTH + BADKEY/BADSIG unsigned, BADTIME signed). It is believed
        // only as a reason to stop retrying; it cannot make us count the NOTIFY as acknowledged.
        r.tsigError = t.error;
        r.peerError = true;
        return r;
    }
    r.tsigError = zones::verifyResponse(reply, *session, now);
    return r;
}

struct Notifier::Job {
    Notifier* owner;
    std::string key, zone, apex, target;
    ListenAddr addr;
    uint32_t serial = 0;
    uint16_t id = 0;
    bool sign = false;
    zones::TsigKey tsigKey;   // a copy: the job outlives the snapshot that named it
    zones::TsigSession tsig;  // of the last NOTIFY sent: its reply is checked against that MAC
    int attempts = 0;
    int delayMs = 0;
    int fd = -1;
    event* ev = nullptr;
    int64_t startedUs = 0;  // monotonicUs() when the first attempt was sent
};

Notifier::Notifier(event_base* base, int firstDelayMs) : base_(base), firstDelayMs_(firstDelayMs) {}

Notifier::~Notifier() {
    for (auto& [k, j] : jobs_) {
        if (j->ev) event_free(j->ev);
        if (j->fd >= 0) close(j->fd);
    }
}

void Notifier::send(const std::string& zone, std::string_view apexWire, uint32_t serial,
                    const std::vector<NotifyTarget>& targets, const std::vector<zones::TsigKey>& keys) {
    static std::mt19937 rng{std::random_device{}()};
    for (const auto& nt : targets) {
        const ListenAddr& t = nt.addr;
        std::string key = zone + " " + t.text;
        if (auto it = jobs_.find(key); it != jobs_.end()) finish(*it->second);  // superseded
        auto j = std::make_unique<Job>();
        j->owner = this;
        j->key = key;
        j->zone = zone;
        j->apex = std::string(apexWire);
        j->target = t.text;
        j->addr = t;
        j->serial = serial;
        j->id = uint16_t(rng());  // a guessable id would let anyone on path forge the acknowledgement
        j->delayMs = firstDelayMs_;
        if (nt.key >= 0 && size_t(nt.key) < keys.size()) {
            j->sign = true;
            j->tsigKey = keys[size_t(nt.key)];
        }
        j->startedUs = monotonicUs();
        j->fd = socket(t.addr.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (j->fd < 0 || connect(j->fd, reinterpret_cast<const sockaddr*>(&t.addr), t.len) != 0) {
            // connect() on UDP: only the target's replies reach this socket, and ICMP errors show up.
            log::error("notify {} serial {} to {}: {}", zone, serial, t.text, strerror(errno));
            if (j->fd >= 0) close(j->fd);
            continue;
        }
        j->ev = event_new(base_, j->fd, EV_READ | EV_PERSIST, onEvent, j.get());
        Job& ref = *j;
        jobs_[key] = std::move(j);
        transmit(ref);
    }
}

void Notifier::transmit(Job& j) {
    uint8_t buf[1024];
    size_t n = buildNotify(j.id, j.apex, j.serial, buf);
    // Each attempt is signed afresh (a new Time Signed); the reply must answer the last one's MAC.
    if (j.sign) n = zones::signRequest({buf, sizeof buf}, n, j.tsigKey, uint64_t(time(nullptr)), j.tsig);
    ++j.attempts;
    if (::send(j.fd, buf, n, 0) < 0 && errno != ECONNREFUSED)
        log::warn("notify {} serial {} to {}: send: {}", j.zone, j.serial, j.target, strerror(errno));
    timeval tv{j.delayMs / 1000, (j.delayMs % 1000) * 1000};
    event_add(j.ev, &tv);
    j.delayMs = std::min(j.delayMs * 2, firstDelayMs_ * 8);
}

void Notifier::onEvent(evutil_socket_t fd, short what, void* arg) {
    auto* j = static_cast<Job*>(arg);
    Notifier* self = j->owner;
    if (what & EV_TIMEOUT) {
        if (j->attempts >= kMaxAttempts) {
            log::warn(
                "notify {} serial {} to {}: no answer after {} attempts; giving up (the secondary "
                "still refreshes on its SOA timers)",
                j->zone, j->serial, j->target, j->attempts);
            self->finish(*j);
            return;
        }
        self->transmit(*j);
        return;
    }
    uint8_t buf[4096];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n < 0) return;  // EAGAIN, or ECONNREFUSED (nobody listens yet): the timer retries
        NotifyReply rep =
            parseNotifyReply({buf, size_t(n)}, j->id, j->sign ? &j->tsig : nullptr, uint64_t(time(nullptr)));
        int rc = rep.rcode;
        if (rc < 0) continue;  // not our answer
        if (rep.tsigError && !rep.peerError) {
            log::warn("notify {} serial {} to {}: reply ignored: TSIG {} (key {})", j->zone, j->serial,
                      j->target, zones::tsigErrorText(rep.tsigError), j->tsigKey.label);
            continue;
        }
        if (rep.tsigError) {
            log::warn(
                "notify {} serial {} to {}: the secondary answered TSIG {} for key {} (does it hold "
                "this key, and is its clock right?)",
                j->zone, j->serial, j->target, zones::tsigErrorText(rep.tsigError), j->tsigKey.label);
            self->finish(*j);
            return;
        }
        const int64_t ms = (monotonicUs() - j->startedUs) / 1000;
        if (rc == 0)
            log::info("notify {} serial {} to {}: acknowledged after {} attempt(s), {} ms{}", j->zone,
                      j->serial, j->target, j->attempts, ms,
                      j->sign ? fmt::format(" (TSIG key {})", j->tsigKey.label) : std::string());
        else
            log::warn("notify {} serial {} to {}: answered {} (does the secondary allow NOTIFY from us?)",
                      j->zone, j->serial, j->target, rcodeText(rc));
        self->finish(*j);
        return;
    }
}

void Notifier::finish(Job& j) {
    if (j.ev) event_free(j.ev);
    if (j.fd >= 0) close(j.fd);
    jobs_.erase(j.key);  // destroys j
}

}  // namespace gslb::server::xfr
