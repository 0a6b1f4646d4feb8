// The served SOA serial of [[zone]] serial_policy (doc/dnssec.md): a re-sign (a rebuild) serves a greater
// serial, the previous snapshot's and state_dir's zone-serials.json are both honoured, "keep" is refused with
// dnssec.
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "tests/server/helpers.hpp"
#include "server/state/zone_serials.hpp"
#include "zones/dnssec_keys.hpp"
#include "zones/serial.hpp"

using namespace gslb;
using namespace gslb::server;

namespace {

constexpr uint32_t kNow = 1796083200;  // 2026-12-01 00:00:00 UTC

// A signed t.test. (one CSK in dir/keys), `policyLine` added to its [[zone]], state_dir = dir/state.
// The zone's file serial is `fileSerial`.
st::Written signedZone(const std::string& policyLine, uint32_t fileSerial = 1, bool stateDir = true) {
    st::Written w;
    w.dir = st::newDir();
    std::string zone = st::kZone;
    zone.replace(zone.find("2024010101"), 10, std::to_string(fileSerial));
    w.zone = st::writeFile(w.dir, "t.zone", zone);
    std::string keys = w.dir + "/keys";
    REQUIRE(mkdir(keys.c_str(), 0700) == 0);
    zones::DnssecKey k;
    std::string error;
    REQUIRE(zones::generateKey("t.test.", 13, 257, kNow - 86400, k, error));
    REQUIRE(zones::writeKeyFiles(k, keys, error));
    std::string conf = "[server]\nlisten = [\"127.0.0.1:10053\"]\n";
    if (stateDir) conf += "state_dir = \"state\"\n";
    conf += "\n[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\ndnssec = true\nkey_dir = \"keys\"\n" +
            policyLine + "\n[site.east]\n";
    w.config = st::writeFile(w.dir, "gslbd.toml", conf);
    if (stateDir) REQUIRE(mkdir((w.dir + "/state").c_str(), 0700) == 0);
    return w;
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

uint32_t servedSerial(const Snapshot& s) {
    return s.db.zones().at(0)->serial();
}

}  // namespace

TEST_CASE("serial_policy: unixtime by default for a signed zone, and every rebuild serves a greater serial") {
    st::Written w = signedZone("");
    std::string error;
    auto a = buildSnapshot(w.config, nullptr, error, kNow);
    REQUIRE_MESSAGE(a, error);
    CHECK(servedSerial(*a) == kNow);  // the file says 1
    CHECK(a->servedSerials.at("t.test.") == kNow);
    // A re-sign within the same second (a timer and a SIGHUP together): one more.
    auto b = buildSnapshot(w.config, a.get(), error, kNow);
    REQUIRE(b);
    CHECK(servedSerial(*b) == kNow + 1);
    // A re-sign a week later: the clock.
    auto c = buildSnapshot(w.config, b.get(), error, kNow + 7 * 86400);
    REQUIRE(c);
    CHECK(servedSerial(*c) == kNow + 7 * 86400);
    // The SOA's RRSIG covers the new serial: the SOA record of the snapshot carries it (AXFR and answers).
    const zones::Zone& z = *c->db.zones().at(0);
    const zones::Rdata& rd = z.rdata(z.soa().first);
    auto got = zones::soaSerial(std::string_view(reinterpret_cast<const char*>(z.bytes(rd)), rd.len));
    CHECK(got == kNow + 7 * 86400);
}

TEST_CASE("serial_policy: a restart goes on from state_dir, never back") {
    st::Written w = signedZone("serial_policy = \"increment\"\n", 2024010101u);
    std::string error;
    auto a = buildSnapshot(w.config, nullptr, error, kNow);
    REQUIRE_MESSAGE(a, error);
    CHECK(servedSerial(*a) == 2024010101u);  // increment starts from the file's serial
    auto b = buildSnapshot(w.config, a.get(), error, kNow);
    REQUIRE(b);
    CHECK(servedSerial(*b) == 2024010102u);
    // buildSnapshot writes nothing (gslbctl and --check use it too): main saves what it returns.
    service::ZoneSerials onDisk;
    REQUIRE(service::loadZoneSerials(w.dir + "/state", onDisk, error));
    CHECK(onDisk.empty());
    REQUIRE(service::saveZoneSerials(w.dir + "/state", b->servedSerials, error));
    // A new process (no previous snapshot) reads the state.
    auto c = buildSnapshot(w.config, nullptr, error, kNow);
    REQUIRE(c);
    CHECK(servedSerial(*c) == 2024010103u);
}

TEST_CASE("serial_policy: dateserial, and the file's serial when it is ahead") {
    st::Written w = signedZone("serial_policy = \"dateserial\"\n");
    std::string error;
    auto a = buildSnapshot(w.config, nullptr, error, kNow);
    REQUIRE_MESSAGE(a, error);
    CHECK(servedSerial(*a) == 2026120100u);
    auto b = buildSnapshot(w.config, a.get(), error, kNow + 60);
    REQUIRE(b);
    CHECK(servedSerial(*b) == 2026120101u);
    std::string zone = st::kZone;
    zone.replace(zone.find("2024010101"), 10, "2027010101");  // the operator's own bump
    st::writeFile(w.dir, "t.zone", zone);
    auto c = buildSnapshot(w.config, b.get(), error, kNow + 120);
    REQUIRE(c);
    CHECK(servedSerial(*c) == 2027010101u);
}

TEST_CASE("serial_policy: a file serial ahead of the clock (YYYYMMDDnn is, in RFC 1982) is bumped by one") {
    st::Written w = signedZone("", 2026120105u);
    std::string error;
    auto a = buildSnapshot(w.config, nullptr, error, kNow);
    REQUIRE_MESSAGE(a, error);
    CHECK(servedSerial(*a) == 2026120105u);
    auto b = buildSnapshot(w.config, a.get(), error, kNow + 1800);
    REQUIRE(b);
    CHECK(servedSerial(*b) == 2026120106u);
}

TEST_CASE("serial_policy: keep is the default of an unsigned zone; others apply to it too") {
    auto s = st::snapshot(st::baseConfig(""));
    CHECK(servedSerial(*s) == 2024010101u);
    CHECK(s->servedSerials.at("t.test.") == 2024010101u);  // kept too: a later change must not go back
    std::string zone = st::kZone;
    zone.replace(zone.find("2024010101"), 10, "7");
    std::string conf = st::baseConfig("");
    conf.replace(conf.find("file = \"t.zone\"\n"), 16, "file = \"t.zone\"\nserial_policy = \"unixtime\"\n");
    st::Written w = st::writeConfig(conf, zone);
    std::string error;
    auto u = buildSnapshot(w.config, nullptr, error, kNow);
    REQUIRE_MESSAGE(u, error);
    CHECK(servedSerial(*u) == kNow);
}

TEST_CASE("serial_policy: keep with dnssec and unknown values are refused with file:line") {
    std::string err = st::configError(
        "[server]\nlisten = [\"127.0.0.1:10053\"]\n[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\ndnssec = "
        "true\nkey_dir = \"k\"\nserial_policy = \"keep\"\n");
    CHECK_MESSAGE(err.find(":8: ") != std::string::npos, err);
    CHECK_MESSAGE(err.find("serial_policy: \"keep\" does not work with dnssec") != std::string::npos, err);
    CHECK_MESSAGE(err.find("secondaries") != std::string::npos, err);
    err = st::configError(
        "[server]\nlisten = [\"127.0.0.1:10053\"]\n[[zone]]\nname = \"t.test.\"\nfile = \"t.zone\"\n"
        "serial_policy = \"date\"\n");
    CHECK_MESSAGE(err.find("serial_policy: must be") != std::string::npos, err);
}

TEST_CASE("zone-serials.json: round trip; a malformed file fails the load and says where") {
    std::string dir = st::newDir(), error;
    service::ZoneSerials in{{"a.test.", 1}, {"b.test.", 4294967295u}}, out;
    REQUIRE(service::saveZoneSerials(dir, in, error));
    REQUIRE(service::loadZoneSerials(dir, out, error));
    CHECK(out == in);
    CHECK(service::loadZoneSerials("", out, error));  // no state_dir: nothing
    CHECK(out.empty());
    st::writeFile(dir, "zone-serials.json", "{\"version\": 1, \"zones\": {\"a.test.\": -3}}");
    CHECK_FALSE(service::loadZoneSerials(dir, out, error));
    CHECK_MESSAGE(error.find("zone-serials.json: zone a.test.") != std::string::npos, error);
    st::Written w = signedZone("");
    st::writeFile(w.dir + "/state", "zone-serials.json", "not json");
    CHECK_FALSE(buildSnapshot(w.config, nullptr, error, kNow));
    CHECK_MESSAGE(error.find("zone-serials.json") != std::string::npos, error);
}

TEST_CASE(
    "serial: turning dnssec off (keep) never goes back from the signed serials, here or after a restart") {
    // The trial's case: signed, a bump per rebuild above the file's; then dnssec = false, serial_policy
    // "keep". Serving the file's 2026120102 again would leave secondaries on the signed zone (RFC 1982).
    st::Written w = signedZone("", 2026120102u);
    std::string error;
    auto a = buildSnapshot(w.config, nullptr, error, kNow);
    REQUIRE_MESSAGE(a, error);
    auto b = buildSnapshot(w.config, a.get(), error, kNow + 60);
    REQUIRE(b);
    REQUIRE(servedSerial(*b) == 2026120103u);
    REQUIRE(service::saveZoneSerials(w.dir + "/state", b->servedSerials, error));
    std::string conf = slurp(w.config);
    conf.replace(conf.find("dnssec = true"), 13, "dnssec = false");
    st::writeFile(w.dir, "gslbd.toml", conf);
    auto c = buildSnapshot(w.config, b.get(), error, kNow + 120);
    REQUIRE_MESSAGE(c, error);
    CHECK(servedSerial(*c) == 2026120104u);  // the data changed (no signatures): one more
    CHECK(c->db.zones().at(0)->signer() == nullptr);
    CHECK(c->servedSerials.at("t.test.") == 2026120104u);
    REQUIRE(c->warnings.size() == 1);
    CHECK_MESSAGE(c->warnings[0].message.find("zone t.test.: serving serial 2026120104, not the file's "
                                              "2026120102: it is not greater than the 2026120103 served "
                                              "before (RFC 1982)") != std::string::npos,
                  c->warnings[0].message);
    // Nothing changed since: the same serial (no transfer at every reload), the same warning.
    auto d = buildSnapshot(w.config, c.get(), error, kNow + 180);
    REQUIRE(d);
    CHECK(servedSerial(*d) == 2026120104u);
    CHECK(d->warnings.size() == 1);
    // A restart, the state file says 2026120104: not back to the file's either.
    REQUIRE(service::saveZoneSerials(w.dir + "/state", d->servedSerials, error));
    auto e = buildSnapshot(w.config, nullptr, error, kNow + 240);
    REQUIRE(e);
    CHECK(servedSerial(*e) == 2026120105u);  // no running zone to compare: counted as changed
    // The operator raises the file's serial past it: the file's again, no warning.
    std::string zone = slurp(w.zone);
    zone.replace(zone.find("2026120102"), 10, "2026120200");
    st::writeFile(w.dir, "t.zone", zone);
    auto f = buildSnapshot(w.config, e.get(), error, kNow + 300);
    REQUIRE(f);
    CHECK(servedSerial(*f) == 2026120200u);
    CHECK(f->warnings.empty());
}

TEST_CASE("serial: keep with a file edited but not bumped serves one more than before") {
    st::Written w = st::writeConfig(st::baseConfig(""), st::kZone);
    std::string error;
    auto a = buildSnapshot(w.config, nullptr, error, kNow);
    REQUIRE_MESSAGE(a, error);
    CHECK(servedSerial(*a) == 2024010101u);
    auto b = buildSnapshot(w.config, a.get(), error, kNow);
    REQUIRE(b);
    CHECK(servedSerial(*b) == 2024010101u);  // unchanged: no bump, no warning
    CHECK(b->warnings.empty());
    st::writeFile(w.dir, "t.zone", st::kZone + "added 300 IN A 192.0.2.99\n");
    auto c = buildSnapshot(w.config, b.get(), error, kNow);
    REQUIRE(c);
    CHECK(servedSerial(*c) == 2024010102u);
    CHECK(c->warnings.size() == 1);
}
