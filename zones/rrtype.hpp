// RR type and class numbers this code treats specially (IANA "Resource Record (RR) TYPEs").
#pragma once
#include <cstdint>

namespace gslb::zones {

enum RRType : uint16_t {
    kTypeA = 1,
    kTypeNS = 2,
    kTypeMD = 3,
    kTypeMF = 4,
    kTypeCNAME = 5,
    kTypeSOA = 6,
    kTypeMB = 7,
    kTypeMG = 8,
    kTypeMR = 9,
    kTypePTR = 12,
    kTypeHINFO = 13,
    kTypeMINFO = 14,
    kTypeMX = 15,
    kTypeTXT = 16,
    kTypeAAAA = 28,
    kTypeSRV = 33,
    kTypeDNAME = 39,
    kTypeOPT = 41,
    kTypeDS = 43,
    kTypeRRSIG = 46,
    kTypeNSEC = 47,
    kTypeNSEC3 = 50,
    kTypeNSEC3PARAM = 51,
    kTypeSVCB = 64,   // RFC 9460
    kTypeHTTPS = 65,  // RFC 9460 §9
    kTypeTSIG = 250,  // RFC 8945: the last record of a signed message, never zone data
    kTypeIXFR = 251,
    kTypeAXFR = 252,
    kTypeMAILB = 253,
    kTypeMAILA = 254,
    kTypeANY = 255,
};

enum RRClass : uint16_t { kClassIN = 1, kClassCH = 3, kClassNONE = 254, kClassANY = 255 };

enum Rcode : uint8_t {
    kRcodeNoError = 0,
    kRcodeFormErr = 1,
    kRcodeServFail = 2,
    kRcodeNxDomain = 3,
    kRcodeNotImp = 4,
    kRcodeRefused = 5,
    kRcodeYxDomain = 6,  // RFC 6672 §2.2: a DNAME substitution would make a name longer than 255 octets
    kRcodeNotAuth = 9,
    kRcodeBadVers = 16,    // extended RCODE, only expressible with an OPT record (RFC 6891 §6.1.3)
    kRcodeBadCookie = 23,  // extended RCODE (RFC 7873 §8)
};

/// Meta types and QTYPE-only values (RFC 6895 §3.1): they never appear as zone data.
inline bool isMetaType(uint16_t t) {
    return t == kTypeOPT || (t >= 128 && t <= 255);
}

}  // namespace gslb::zones
