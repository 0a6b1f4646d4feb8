#include <doctest/doctest.h>

#include "helpers.hpp"

using namespace gslb::metrics;
using namespace gslb::metrics::test;
using V = std::vector<int>;

namespace {
std::vector<Candidate> prefs(std::vector<int> v) {
    auto c = candidates(v.size());
    for (std::size_t i = 0; i < c.size(); ++i) c[i].preference = static_cast<std::uint8_t>(v[i]);
    return c;
}
}  // namespace

TEST_CASE("preference: keeps the highest site preference") {
    CHECK(kept(filterPreference, prefs({128, 200, 200, 5})) == V{1, 2});
    CHECK(kept(filterPreference, prefs({128, 128})) == V{0, 1});  // the default everywhere: all
    CHECK(kept(filterPreference, prefs({255, 1})) == V{0});
}

TEST_CASE("preference: 0 takes a site out, even the only one (hard exclusion)") {
    CHECK(kept(filterPreference, prefs({0, 1, 0})) == V{1});
    CHECK(kept(filterPreference, prefs({0})).empty());
    CHECK(kept(filterPreference, prefs({0, 0})).empty());
}
