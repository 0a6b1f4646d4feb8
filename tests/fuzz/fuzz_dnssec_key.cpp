// A key pair as an operator's key directory holds it (BIND's K*.key and K*.private, written by gslbctl,
// ldns-keygen, dnssec-keygen or keymgr) -> parseKey (zones/dnssec_keys). The input is the .key text, a line
// "%%", then the .private text. Invariants: a key that parses is of an algorithm we sign with, its tag is
// the RFC 4034 Appendix B tag of its rdata, it signs (64 octets), and it round-trips: the files gslbctl
// would write for it parse back to the same DNSKEY and timing.
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
    FUZZ_CHECK(back.dnskey == k.dnskey && back.timing.publish == k.timing.publish &&
                   back.timing.activate == k.timing.activate && back.timing.inactive == k.timing.inactive,
               k.zone);
    FUZZ_CHECK(dsRdata(back) == dsRdata(k), k.zone);
    return 0;
}
