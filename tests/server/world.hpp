// The zone the server unit tests serve, in a header of its own without doctest, so that the fuzz targets over
// the server (fuzz_config, fuzz_api) load the same world as tests/server/helpers.hpp rather than a copy of
// it.
#pragma once
#include <string>

namespace st {

/// t.test.: www (3 A), a v4+v6 name, a TXT-only name, a CNAME, a delegation (sub, with glue).
inline const std::string kZone =
    "$ORIGIN t.test.\n"
    "$TTL 300\n"
    "@ IN SOA ns1 hostmaster 2024010101 3600 900 604800 120\n"
    "@ IN NS ns1\n"
    "ns1 IN A 192.0.2.53\n"
    "www IN A 192.0.2.1\n"
    "www IN A 192.0.2.2\n"
    "www IN A 192.0.2.3\n"
    "dual IN A 192.0.2.1\n"
    "dual IN AAAA 2001:db8::1\n"
    "txt IN TXT \"no address here\"\n"
    "alias IN CNAME www\n"
    "sub IN NS ns.sub\n"
    "ns.sub IN A 192.0.2.54\n";

}  // namespace st
