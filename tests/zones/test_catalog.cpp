// The RFC 9432 catalog zone gslbd builds from its [[zone]]s (zones/catalog.cpp): every record, exactly.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "helpers.hpp"
#include "zones/axfr.hpp"
#include "zones/catalog.hpp"
#include "zones/rrtype.hpp"

using namespace gslb::zones;

namespace {

std::vector<std::string> records(const Zone& z) {
    auto q = testutil::makeQuery(z.name(), kTypeAXFR);
    XfrWriter w(z, {q.data(), q.size()});
    std::vector<uint8_t> buf(65535);
    size_t n = w.next({buf.data(), buf.size()});
    REQUIRE(w.done());
    return testutil::decode(buf.data(), n).an;
}

}  // namespace

TEST_CASE("catalog zone: SOA, NS, version 2, a PTR per member under zones, group properties") {
    WireName apex;
    REQUIRE(textToName("cat.test.", {}, apex));
    SourceSet set;
    std::string err;
    REQUIRE(catalogRecords(apex, {{"a.example.", ""}, {"B.Example.", "east"}}, 42, "catalog cat.test.", set,
                           err));
    auto z = Zone::compile(apex, set, "", err);
    REQUIRE_MESSAGE(z, err);
    CHECK(z->serial() == 42);
    CHECK(records(*z) == std::vector<std::string>{
                             "cat.test. 0 IN SOA invalid. invalid. 42 3600 600 2147483646 0",
                             "cat.test. 0 IN NS invalid.",
                             "version.cat.test. 0 IN TXT \"2\"",
                             "af4181b9fc9791e7.zones.cat.test. 0 IN PTR a.example.",
                             "7e19817cbaa56be7.zones.cat.test. 0 IN PTR b.example.",
                             "group.7e19817cbaa56be7.zones.cat.test. 0 IN TXT \"east\"",
                             "cat.test. 0 IN SOA invalid. invalid. 42 3600 600 2147483646 0",
                         });
    // The ID is the name's, whatever its case and wherever it sits in the list: stable across restarts.
    CHECK(catalogMemberId(std::string("\1b\7example\0", 11)) == "7e19817cbaa56be7");
    // A member twice, or a name that is none, is refused.
    SourceSet again;
    CHECK(
        !catalogRecords(apex, {{"a.example.", ""}, {"A.EXAMPLE.", ""}}, 1, "catalog cat.test.", again, err));
    CHECK(err == "catalog cat.test.: zone A.EXAMPLE. is a member of the catalog twice");
    // No members: still a valid catalog (SOA, NS, version).
    SourceSet empty;
    REQUIRE(catalogRecords(apex, {}, 7, "catalog cat.test.", empty, err));
    auto e = Zone::compile(apex, empty, "", err);
    REQUIRE(e);
    CHECK(e->recordCount() == 3);
}
