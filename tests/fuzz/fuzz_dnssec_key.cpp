// A key pair as an operator's key directory holds it (BIND's K*.key and K*.private, written by gslbctl,
// ldns-keygen, dnssec-keygen or keymgr) -> parseKey (zones/dnssec_keys). The input is the .key text, a line
// "%%", then the .private text. Invariants: a key that parses is of an algorithm we sign with, its tag is
// the RFC 4034 Appendix B tag of its rdata, it signs (64 octets), and it round-trips: the files gslbctl
// would write for it parse back to the same DNSKEY and timing, and so do its own two texts with new timing
// written into them the way `gslbctl dnssec rollover` rewrites a key (withTiming, withTimingComments: the
// other lines of the input kept).
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.hpp"
#include "zones/dnssec_keys.hpp"

using namespace gslb::zones;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > 16384) return 0;
    std::string_view all(reinterpret_cast<const char*>(data), size);
    size_t cut = all.find("\n%%\n");
    std::string_view key = all.substr(0, cut),
                     priv = cut == std::string_view::npos ? "" : all.substr(cut + 4);
    DnssecKey k;
    std::string error;
    if (!parseKey(key, priv, "", k, error)) {
        FUZZ_CHECK(!error.empty(), "a refusal says why");
        return 0;
    }
    FUZZ_CHECK(k.algorithm == kAlgEcdsaP256Sha256 || k.algorithm == kAlgEd25519, std::to_string(k.algorithm));
    FUZZ_CHECK(k.tag == keyTag(k.dnskey), k.zone);
    FUZZ_CHECK(k.pkey != nullptr, k.zone);
    uint8_t sig[64];
    FUZZ_CHECK(signData(k, "some data", sig), k.zone);
    DnssecKey back;
    FUZZ_CHECK(parseKey(keyFileText(k), privateFileText(k), k.zone, back, error), error);
    auto sameTiming = [](const KeyTiming& a, const KeyTiming& b) {
        return a.created == b.created && a.publish == b.publish && a.activate == b.activate &&
               a.inactive == b.inactive && a.remove == b.remove;
    };
    FUZZ_CHECK(back.dnskey == k.dnskey && sameTiming(back.timing, k.timing), k.zone);
    FUZZ_CHECK(dsRdata(back) == dsRdata(k), k.zone);
    // A rollover's rewrite of the input's own text: the times move (some set, some cleared), nothing else.
    KeyTiming t = k.timing;
    t.inactive = 1800000000 + int64_t(size);
    t.remove = t.inactive + 3600;
    if (size & 1) t.publish = 0;
    std::string newKey = withTimingComments(key, t), newPriv = withTiming(priv, t);
    DnssecKey moved;
    FUZZ_CHECK(parseKey(newKey, newPriv, k.zone, moved, error), error);
    FUZZ_CHECK(moved.dnskey == k.dnskey && sameTiming(moved.timing, t), k.zone);
    return 0;
}
