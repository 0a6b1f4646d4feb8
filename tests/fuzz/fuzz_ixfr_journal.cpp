// An IXFR journal file from state_dir (zones/journal.hpp parseJournal), as read at start: the input as it is,
// and the input with a correct SHA-256 appended (so that exploration gets past the checksum into the
// structure). Invariants: a refused file leaves an empty journal and says why; an accepted one is written
// back to exactly the same bytes; its changesets chain (each one's `to` the next one's `from`), their
// records read back in the counts the header says; condensing any suffix of them gives one changeset with
// the outer serials and an SOA at the head of each list.
#include <openssl/evp.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.hpp"
#include "zones/journal.hpp"
#include "zones/rrtype.hpp"
#include "zones/serial.hpp"

using namespace gslb;

namespace {

void check(std::span<const uint8_t> in) {
    zones::Journal j;
    std::string error;
    if (!zones::parseJournal(in, j, error)) {
        FUZZ_CHECK(!error.empty(), "refused without a reason");
        FUZZ_CHECK(j.entries.empty() && j.apex.empty(), "a refused journal kept something");
        return;
    }
    std::string back = zones::serializeJournal(j);
    // Octets compared as octets (char is signed here: 0xC0 as a char is not 0xC0 as a uint8_t).
    FUZZ_CHECK(back.size() == in.size() && std::memcmp(back.data(), in.data(), in.size()) == 0,
               "accepted, but written back differently");
    for (size_t i = 0; i < j.entries.size(); ++i) {
        const zones::Changeset& cs = *j.entries[i];
        if (i + 1 < j.entries.size()) FUZZ_CHECK(cs.to == j.entries[i + 1]->from, "a gap in the chain");
        zones::DiffReader rd(cs.records);
        zones::DiffRecord r;
        uint64_t n = 0;
        while (rd.next(r)) ++n;
        FUZZ_CHECK(!rd.bad() && n == uint64_t(cs.removed) + cs.added, "records do not match the counts");
    }
    if (j.entries.empty()) return;
    std::vector<const zones::Changeset*> seq;
    for (const auto& e : j.entries) seq.push_back(e.get());
    for (size_t k = 0; k < seq.size(); ++k) {
        zones::Changeset c = zones::condense({seq.data() + k, seq.size() - k});
        FUZZ_CHECK(c.from == seq[k]->from && c.to == j.serial, "condensed serials");
        zones::DiffReader rd(c.records);
        zones::DiffRecord r;
        uint32_t i = 0;
        while (rd.next(r)) {
            if (i == 0 || i == c.removed)
                FUZZ_CHECK(r.type == zones::kTypeSOA && zones::soaSerial(r.rdata) == (i == 0 ? c.from : c.to),
                           "a condensed list does not open with its SOA");
            ++i;
        }
        FUZZ_CHECK(!rd.bad() && i == c.removed + c.added, "condensed counts");
        FUZZ_CHECK(j.from(seq[k]->from).size() == seq.size() - k, "from() and the chain disagree");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > (1u << 20)) return 0;
    check({data, size});
    std::vector<uint8_t> sealed(data, data + size);
    sealed.resize(size + 32);
    unsigned len = 0;
    EVP_Digest(data, size, sealed.data() + size, &len, EVP_sha256(), nullptr);
    check({sealed.data(), sealed.size()});
    return 0;
}
