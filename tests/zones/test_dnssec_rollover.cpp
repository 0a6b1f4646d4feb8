// Key rollover (zones/dnssec_rollover.cpp): RFC 7583's timelines with worked numbers, the TTLs read from a
// zone, the key a rollover replaces and its refusals, key events; the timing rewrite of key files
// (zones/dnssec_keys.cpp withTiming, rewriteTiming, keyFilesStamp).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include <string>

#include "helpers.hpp"
#include "zones/dnssec_keys.hpp"
#include "zones/dnssec_rollover.hpp"
#include "zones/loader.hpp"
#include "zones/read_file.hpp"

using namespace gslb::zones;

namespace {

constexpr int64_t T0 = 1800000000;  // 2027-01-15T08:00:00Z

// A zone's TTLs as an operator's might be: SOA refresh 3600 + retry 900 (Dprp 4500), DNSKEY (SOA) TTL 3600,
// largest signed TTL 7200; the parent's DS TTL 86400 with DprpP 3600 (BIND's defaults).
RolloverIntervals intervals() {
    RolloverIntervals iv;
    iv.dprp = 4500;
    iv.dprpP = 3600;
    iv.ttlKey = 3600;
    iv.ttlSig = 7200;
    iv.ttlDs = 86400;
    return iv;
}

DnssecKey key(uint16_t flags, KeyTiming t = {}) {
    DnssecKey k;
    std::string error;
    REQUIRE_MESSAGE(generateKey("roll.test.", kAlgEd25519, flags, T0 - 86400, k, error), error);
    k.timing = t;
    return k;
}

}  // namespace

TEST_CASE("ZSK pre-publication (RFC 7583 §3.2.1): Ipub = Dprp + TTLkey, Iret = Dsgn + Dprp + TTLsig") {
    RolloverPlan p = planRollover(KeyKind::Zsk, T0, intervals());
    // Ipub = 4500 + 3600 = 8100; Iret = 0 + 4500 + 7200 = 11700.
    CHECK(p.ipub == 8100);
    CHECK(p.iret == 11700);
    CHECK(p.newPublish == T0);
    CHECK(p.newActivate == T0 + 8100);  // Tact(new) = Tpub(new) + Ipub
    CHECK(p.oldInactive == T0 + 8100);  // Tret(old) = Tact(new): one load swaps the signers
    CHECK(p.oldRemove == T0 + 19800);   // Trem(old) = Tret(old) + Iret = 8100 + 11700
    CHECK(p.dsAdd == 0);                // the DS never changes
    CHECK(p.dsRemove == 0);
    // Dsgn is gslbd's 0, but the formula keeps it.
    RolloverIntervals iv = intervals();
    iv.dsgn = 60;
    CHECK(planRollover(KeyKind::Zsk, T0, iv).oldRemove == T0 + 8100 + 11760);
}

TEST_CASE("KSK double-DS (RFC 7583 §3.3.2): IpubP = DprpP + TTLds, then the swap, Iret = Dprp + TTLkey") {
    RolloverPlan p = planRollover(KeyKind::Ksk, T0, intervals());
    // IpubP = 3600 + 86400 = 90000; Iret = 4500 + 3600 = 8100.
    CHECK(p.ipubP == 90000);
    CHECK(p.iret == 8100);
    CHECK(p.dsAdd == T0);  // the new DS goes to the parent first
    CHECK(p.newPublish == T0 + 90000);
    CHECK(p.newActivate == T0 + 90000);
    CHECK(p.oldInactive == T0 + 90000);
    CHECK(p.oldRemove == T0 + 90000);  // the child swaps the keys at one load
    CHECK(p.dsRemove == T0 + 98100);   // the old DS leaves after Iret: 90000 + 8100
}

TEST_CASE(
    "CSK double-DS with pre-publication: the swap after max(Ipub, IpubP), Iret on max(TTLsig, TTLkey)") {
    RolloverPlan p = planRollover(KeyKind::Csk, T0, intervals());
    // Ipub 8100, IpubP 90000: the parent is the slower; Iret = 0 + 4500 + max(7200, 3600) = 11700.
    CHECK(p.ipub == 8100);
    CHECK(p.ipubP == 90000);
    CHECK(p.iret == 11700);
    CHECK(p.dsAdd == T0);
    CHECK(p.newPublish == T0);
    CHECK(p.newActivate == T0 + 90000);
    CHECK(p.oldInactive == T0 + 90000);
    CHECK(p.oldRemove == T0 + 101700);  // 90000 + 11700
    CHECK(p.dsRemove == T0 + 101700);

    // A fast parent (DprpP 60, TTLds 3600: IpubP 3660) and a short TTLsig (300): Ipub = 8100 decides the
    // swap, and TTLkey (3600) the retirement: Iret = 4500 + max(300, 3600) = 8100.
    RolloverIntervals iv = intervals();
    iv.dprpP = 60;
    iv.ttlDs = 3600;
    iv.ttlSig = 300;
    p = planRollover(KeyKind::Csk, T0, iv);
    CHECK(p.ipubP == 3660);
    CHECK(p.newActivate == T0 + 8100);
    CHECK(p.iret == 8100);
    CHECK(p.oldRemove == T0 + 16200);
}

TEST_CASE("the TTLs a rollover waits on, from the zone as gslbd signs it") {
    const char* text =
        "$ORIGIN ttl.test.\n"
        "@ 600 SOA ns1 hostmaster 1 3600 900 604800 120\n"
        "@ 600 NS ns1\n"
        "ns1 600 A 192.0.2.1\n"
        "www 1800 A 192.0.2.2\n"
        "sub 86400 NS ns.sub\n"  // a cut: NS not signed
        "sub 900 DS 1 13 2 0000000000000000000000000000000000000000000000000000000000000000\n"
        "ns.sub 172800 A 192.0.2.53\n";  // glue: not signed
    std::string error;
    auto z = loadZone(testutil::writeFile("ttl.test.zone", text), "ttl.test.", error);
    REQUIRE_MESSAGE(z, error);
    ZoneTtls t = zoneTtls(*z);
    CHECK(t.key == 600);
    CHECK(t.sig == 1800);
    CHECK(t.sigWhere == "www.ttl.test. A");
    CHECK(t.refresh == 3600);
    CHECK(t.retry == 900);

    // Nothing but the SOA and its NS: the largest is the SOA's own; NSEC's min(SOA TTL, MINIMUM) never more.
    z = loadZone(
        testutil::writeFile("ttl2.test.zone",
                            "$ORIGIN ttl2.test.\n@ 300 SOA ns1 h 1 60 30 600 7200\n@ 300 NS ns1.x.\n"),
        "ttl2.test.", error);
    REQUIRE_MESSAGE(z, error);
    t = zoneTtls(*z);
    CHECK(t.sig == 300);
    CHECK(t.key == 300);
}

TEST_CASE("the key a rollover replaces, and the refusals") {
    std::vector<DnssecKey> keys = {key(257), key(256)};
    size_t i = 9;
    std::string error;
    REQUIRE_MESSAGE(rolloverKey(keys, KeyKind::Zsk, T0, i, error), error);
    CHECK(i == 1);
    REQUIRE_MESSAGE(rolloverKey(keys, KeyKind::Ksk, T0, i, error), error);
    CHECK(i == 0);
    CHECK_FALSE(rolloverKey(keys, KeyKind::Csk, T0, i, error));
    CHECK(error.find("no CSK") != std::string::npos);

    // A CSK alone: no ZSK, no KSK.
    std::vector<DnssecKey> csk = {key(257)};
    CHECK_FALSE(rolloverKey(csk, KeyKind::Zsk, T0, i, error));
    CHECK(error.find("no ZSK") != std::string::npos);
    CHECK_FALSE(rolloverKey(csk, KeyKind::Ksk, T0, i, error));
    REQUIRE_MESSAGE(rolloverKey(csk, KeyKind::Csk, T0, i, error), error);

    // Under way: a pre-published ZSK, an old one with Inactive set, or one retired but not yet deleted.
    RolloverPlan p = planRollover(KeyKind::Zsk, T0, intervals());
    std::vector<DnssecKey> rolling = {key(257), key(256, {0, 0, 0, p.oldInactive, p.oldRemove}),
                                      key(256, {0, p.newPublish, p.newActivate, 0, 0})};
    for (int64_t at : {T0 + 1, p.newActivate + 1}) {
        CAPTURE(at - T0);
        CHECK_FALSE(rolloverKey(rolling, KeyKind::Zsk, at, i, error));
        CHECK(error.find("already under way") != std::string::npos);
    }
    // ... but the KSK may roll meanwhile, and once the old ZSK is deleted the new one rolls.
    CHECK(rolloverKey(rolling, KeyKind::Ksk, T0 + 1, i, error));
    REQUIRE_MESSAGE(rolloverKey(rolling, KeyKind::Zsk, p.oldRemove, i, error), error);
    CHECK(i == 2);

    // Two active ZSKs: which one is meant is not for us to guess.
    std::vector<DnssecKey> two = {key(257), key(256), key(256)};
    CHECK_FALSE(rolloverKey(two, KeyKind::Zsk, T0, i, error));
    CHECK(error.find("2 active ZSKs") != std::string::npos);

    // A KSK whose ZSK is deleted is a CSK again.
    std::vector<DnssecKey> gone = {key(257), key(256, {0, 0, 0, T0 - 10, T0 - 5})};
    CHECK(keyKind(gone[0], gone, T0) == KeyKind::Csk);
    CHECK(keyKind(gone[0], gone, T0 - 6) == KeyKind::Ksk);
}

TEST_CASE("key events: what changes when, and the next one") {
    RolloverPlan p = planRollover(KeyKind::Zsk, T0, intervals());
    std::vector<DnssecKey> keys = {key(257),
                                   key(256, {T0 - 86400, T0 - 86400, T0 - 86400, p.oldInactive, p.oldRemove}),
                                   key(256, {T0, p.newPublish, p.newActivate, 0, 0})};
    CHECK(nextKeyEvent(keys, T0 - 1) == T0);
    CHECK(nextKeyEvent(keys, T0) == T0 + 8100);
    CHECK(nextKeyEvent(keys, T0 + 8100) == T0 + 19800);
    CHECK(nextKeyEvent(keys, T0 + 19800) == 0);
    // The states served: before the rollover (no new key), at T0, at the swap, after the old key's Delete.
    std::vector<DnssecKey> first = {keys[0], keys[1]};
    first[1].timing.inactive = first[1].timing.remove = 0;
    auto text = [](const std::vector<KeyEvent>& ev) {
        std::string s;
        for (const auto& e : ev) s += fmt::format("{} {} {}; ", e.tag, e.role, e.what);
        return s;
    };
    uint16_t old = keys[1].tag, fresh = keys[2].tag;
    // The new key's files seen a second after its Publish: still published, once.
    CHECK(text(keyChanges(first, T0 - 1, keys, T0 + 1)) == fmt::format("{} ZSK is published; ", fresh));
    CHECK(text(keyChanges(keys, T0 + 1, keys, T0 + 8100)) ==
          fmt::format("{} ZSK becomes active; {} ZSK becomes inactive; ", fresh, old));
    CHECK(text(keyChanges(keys, T0 + 8100, keys, T0 + 19800)) == fmt::format("{} ZSK is deleted; ", old));
    CHECK(keyChanges(keys, T0 + 19800, keys, T0 + 30000).empty());
    // Files removed: the key leaves the zone.
    CHECK(text(keyChanges(keys, T0 + 1, {keys[0], keys[2]}, T0 + 2)) ==
          fmt::format("{} ZSK becomes inactive; {} ZSK is deleted; ", old, old));
}

TEST_CASE("timing rewritten in the key files: other lines kept, read back by parseKey and ldns") {
    DnssecKey k = key(256, {T0 - 10, T0 - 10, T0 - 10, 0, 0});
    std::string priv = privateFileText(k);
    // BIND's own extra metadata survives.
    priv += "SyncPublish: 20270101000000\n";
    KeyTiming t{T0 - 10, T0 - 10, T0 - 10, T0 + 8100, T0 + 19800};
    std::string out = withTiming(priv, t);
    CHECK(out.find("SyncPublish: 20270101000000\n") != std::string::npos);
    CHECK(out.find("Inactive: 20270115101500\n") != std::string::npos);  // T0 + 8100 = 10:15:00
    CHECK(out.find("Delete: 20270115133000\n") != std::string::npos);    // T0 + 19800 = 13:30:00
    CHECK(out.find("\nPublish:") == out.rfind("\nPublish:"));            // replaced, not added twice
    std::string pub = withTimingComments(keyFileText(k), t);
    CHECK(pub.find("; Inactive: 20270115101500 (Fri Jan 15 10:15:00 2027)\n") != std::string::npos);
    CHECK(pub.find("; Created:") == pub.rfind("; Created:"));
    DnssecKey back;
    std::string error;
    REQUIRE_MESSAGE(parseKey(pub, out, "roll.test.", back, error), error);
    CHECK(back.timing.inactive == T0 + 8100);
    CHECK(back.timing.remove == T0 + 19800);
    CHECK(back.dnskey == k.dnskey);
    // Unset times are left out.
    CHECK(withTiming(out, KeyTiming{}).find("Inactive") == std::string::npos);

    // On disk: files replaced whole, the .private's mode kept, the directory's stamp moved.
    std::string dir = testutil::tempDir() + "/rollkeys";
    mkdir(dir.c_str(), 0700);
    REQUIRE_MESSAGE(writeKeyFiles(k, dir, error), error);
    uint64_t before = keyFilesStamp(dir, "roll.test.");
    CHECK(before == keyFilesStamp(dir, "roll.test."));
    CHECK(keyFilesStamp(dir, "other.test.") != before);
    CHECK(keyFilesStamp(dir + "/missing", "roll.test.") == 1);
    k.timing = t;
    REQUIRE_MESSAGE(rewriteTiming(k, error), error);
    CHECK(keyFilesStamp(dir, "roll.test.") != before);
    struct stat st {};
    REQUIRE(stat((k.file + ".private").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    std::vector<DnssecKey> loaded;
    REQUIRE_MESSAGE(loadKeys(dir, "roll.test.", loaded, error), error);
    REQUIRE(loaded.size() == 1);
    CHECK(loaded[0].timing.inactive == T0 + 8100);
    CHECK(loaded[0].timing.remove == T0 + 19800);
    CHECK_FALSE(loaded[0].active(T0 + 8100));
    CHECK(loaded[0].published(T0 + 19799));
    CHECK_FALSE(loaded[0].published(T0 + 19800));
    // ldns reads the rewritten .private too (BIND's dnssec-settime and ldns-signzone do).
    std::string text;
    REQUIRE(readFile(k.file + ".private", text, error));
    FILE* f = fmemopen(text.data(), text.size(), "r");
    ldns_key* lk = nullptr;
    CHECK(ldns_key_new_frm_fp(&lk, f) == LDNS_STATUS_OK);
    fclose(f);
    if (lk) ldns_key_deep_free(lk);
}
