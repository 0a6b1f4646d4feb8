#include "zones/rrtype_text.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "zones/ldns.hpp"  // not <ldns/ldns.h>: see there

namespace gslb::zones {

std::string typeText(uint16_t type) {
    char* s = ldns_rr_type2str(ldns_rr_type(type));
    std::string out = s ? s : fmt::format("TYPE{}", type);
    free(s);
    return out;
}

}  // namespace gslb::zones
