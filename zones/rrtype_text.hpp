// An RR type's mnemonic for messages: "A", "AAAA", "DNSKEY", or RFC 3597 §5's "TYPE65280" for a type ldns
// does not name.
#pragma once
#include <cstdint>
#include <string>

namespace gslb::zones {

/// The presentation mnemonic of RR type `type` (IANA "Resource Record (RR) TYPEs", through ldns), else
/// "TYPEnnn" (RFC 3597 §5). Allocates; for logs, warnings and the control API, never the query path.
std::string typeText(uint16_t type);

}  // namespace gslb::zones
