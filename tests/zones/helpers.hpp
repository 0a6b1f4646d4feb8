// Test helpers: zone files written to a temp dir, raw queries, and responses decoded with ldns.
#pragma once
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "zones/answer.hpp"
#include "zones/ldns.hpp"
#include "zones/loader.hpp"

namespace testutil {

inline std::string tempDir() {
    static std::string dir;
    if (dir.empty()) {
        char tmpl[] = "/tmp/gslbd-test-XXXXXX";
        dir = mkdtemp(tmpl);
    }
    return dir;
}

inline std::string writeFile(const std::string& name, const std::string& text) {
    std::string path = tempDir() + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
}

/// A query message for (name, type), with EDNS0 when `edns` (payload `size`, DO bit `dnssecOk`).
inline std::vector<uint8_t> makeQuery(const std::string& name, uint16_t type, bool edns = false,
                                      uint16_t size = 1232, bool dnssecOk = false, uint16_t cls = 1) {
    std::vector<uint8_t> q = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, uint8_t(edns ? 1 : 0)};
    size_t start = 0;
    std::string n = name;
    if (n.back() != '.') n += '.';
    for (size_t i = 0; i < n.size(); ++i) {
        if (n[i] == '.') {
            if (i > start) {
                q.push_back(uint8_t(i - start));
                q.insert(q.end(), n.begin() + long(start), n.begin() + long(i));
            }
            start = i + 1;
        }
    }
    q.push_back(0);
    q.push_back(uint8_t(type >> 8));
    q.push_back(uint8_t(type));
    q.push_back(uint8_t(cls >> 8));
    q.push_back(uint8_t(cls));
    if (edns) {
        uint8_t opt[] = {0, 0, 41, uint8_t(size >> 8), uint8_t(size), 0, 0, uint8_t(dnssecOk ? 0x80 : 0),
                         0, 0, 0};
        q.insert(q.end(), opt, opt + sizeof opt);
    }
    return q;
}

/// A decoded response: rcode, flags and each section's records as presentation text lines.
struct Resp {
    bool ok = false;
    int rcode = -1;
    bool aa = false, tc = false;
    std::vector<std::string> an, ns, ar;
    bool edns = false;
    size_t size = 0;
};

inline std::vector<std::string> rrs(ldns_rr_list* l) {
    std::vector<std::string> out;
    for (size_t i = 0; i < ldns_rr_list_rr_count(l); ++i) {
        char* s = ldns_rr2str(ldns_rr_list_rr(l, i));
        std::string t(s);
        free(s);
        while (!t.empty() && t.back() == '\n') t.pop_back();
        for (auto& c : t)
            if (c == '\t') c = ' ';
        out.push_back(t);
    }
    return out;
}

inline Resp decode(const uint8_t* p, size_t n) {
    Resp r;
    r.size = n;
    ldns_pkt* pkt = nullptr;
    if (ldns_wire2pkt(&pkt, p, n) != LDNS_STATUS_OK) return r;
    r.ok = true;
    r.rcode = ldns_pkt_get_rcode(pkt);
    r.aa = ldns_pkt_aa(pkt);
    r.tc = ldns_pkt_tc(pkt);
    r.an = rrs(ldns_pkt_answer(pkt));
    r.ns = rrs(ldns_pkt_authority(pkt));
    r.ar = rrs(ldns_pkt_additional(pkt));
    r.edns = ldns_pkt_edns(pkt);
    if (r.edns) r.rcode |= int(ldns_pkt_edns_extended_rcode(pkt)) << 4;
    ldns_pkt_free(pkt);
    return r;
}

/// Where the records counted in the header end: equals the message size for a well-formed message.
inline size_t countedEnd(const uint8_t* p, size_t n) {
    auto skipName = [&](size_t i) {
        while (i < n) {
            if ((p[i] & 0xC0) == 0xC0) return i + 2;
            if (p[i] == 0) return i + 1;
            i += size_t(p[i]) + 1;
        }
        return n + 1;
    };
    size_t i = 12;
    size_t qd = size_t(p[4]) << 8 | p[5];
    size_t rr = (size_t(p[6]) << 8 | p[7]) + (size_t(p[8]) << 8 | p[9]) + (size_t(p[10]) << 8 | p[11]);
    for (size_t k = 0; k < qd; ++k) i = skipName(i) + 4;
    for (size_t k = 0; k < rr && i + 10 <= n; ++k) {
        i = skipName(i);
        if (i + 10 > n) return n + 1;
        i += 10 + (size_t(p[i + 8]) << 8 | p[i + 9]);
    }
    return i;
}

struct Server {
    gslb::zones::ZoneDb db;
    gslb::zones::AnswerOptions opt;
    std::vector<uint8_t> out = std::vector<uint8_t>(65536);
    gslb::zones::DynamicHook* hook = nullptr;

    void add(const std::string& origin, const std::string& text) {
        std::string err;
        auto z = gslb::zones::loadZone(writeFile(origin + "zone", text), origin, err);
        REQUIRE_MESSAGE(z, err);
        db.add(std::move(z));
    }
    gslb::zones::AnswerResult raw(const std::vector<uint8_t>& q, bool tcp = false) {
        return gslb::zones::answer(db, opt, {q.data(), q.size()}, tcp, {out.data(), out.size()}, hook);
    }
    Resp ask(const std::vector<uint8_t>& q, bool tcp = false) {
        auto res = raw(q, tcp);
        if (res.action != gslb::zones::Action::Send) return Resp{};
        return decode(out.data(), res.len);
    }
    Resp ask(const std::string& name, uint16_t type, bool tcp = false) {
        return ask(makeQuery(name, type), tcp);
    }
};

}  // namespace testutil
