#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "metrics/compare.hpp"

using namespace gslb::metrics;

TEST_CASE("tolerance: Brocade's example at 10 % (Brocade Virtual ADX GSLB Guide, p. 10)") {
    CHECK(equalWithinTolerance(1000000, 950000, 10));        // 50,000 <= 10 % of 1,000,000
    CHECK(equalWithinTolerance(950000, 1000000, 10));        // symmetric
    CHECK_FALSE(equalWithinTolerance(1000000, 800000, 10));  // 200,000 > 100,000
    CHECK(equalWithinTolerance(1000000, 900000, 10));        // exactly 10 % of the larger: equal
    CHECK_FALSE(equalWithinTolerance(1000000, 899999, 10));
    CHECK(equalWithinTolerance(0, 0, 10));
    CHECK_FALSE(equalWithinTolerance(5, 6, 0));
    CHECK_FALSE(equalWithinTolerance(NAN, 1, 10));
}

TEST_CASE("factor: HP's 900 vs 400 connections (HP SA9200 User Manual, p. 17, doc/design.md)") {
    CHECK_FALSE(withinFactor(900, 400, 0.0));
    CHECK(withinFactor(400, 400, 0.0));
    CHECK(withinFactor(900, 400, 1.25));       // 400 * 2.25 = 900
    CHECK_FALSE(withinFactor(900, 400, 1.0));  // 800
    CHECK(withinFactor(500, 400, 0.25));       // doc/design.md: factor 0.25 keeps what is within 25 %
    CHECK_FALSE(withinFactor(501, 400, 0.25));
    // best 0: only zeros, whatever the factor
    CHECK(withinFactor(0, 0, 100));
    CHECK_FALSE(withinFactor(1, 0, 100));
    CHECK_FALSE(withinFactor(NAN, 400, 1));
}

TEST_CASE(
    "aggregateSlowest: a host with several applications uses the slowest (Brocade Virtual ADX GSLB Guide, p. "
    "10)") {
    const std::vector<double> times{12.5, 40.0, 7.0};
    CHECK(aggregateSlowest(times) == 40.0);
    const std::vector<double> someUnknown{NAN, 3.0, NAN, 9.0};
    CHECK(aggregateSlowest(someUnknown) == 9.0);
    const std::vector<double> none{NAN, NAN};
    CHECK(std::isnan(aggregateSlowest(none)));
    CHECK(std::isnan(aggregateSlowest({})));
}
