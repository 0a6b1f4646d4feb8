#include <doctest/doctest.h>

#include "tools/gslbctl/tomltext.hpp"

using namespace gslb::ctl;

static const char* kConfig = R"(# operator's comment
[server]
listen = ["127.0.0.1:10053"]

[[zone]]
name = "gslb.example.com."
file   =  "gslb.example.com.zone"   # the zone

[site.east]
[site.west]

[hostname."www.gslb.example.com."]
policy = [
  "health",
  "random",
]
[[hostname."www.gslb.example.com.".service]]
address = "192.0.2.10"
site = "east"

# west, added later
[[hostname."www.gslb.example.com.".service]]
address = "198.51.100.10"
site = "west"
)";

TEST_CASE("toml: header lines come from toml++ (not from lines that merely start with '[')") {
    std::vector<int> h;
    std::string err;
    REQUIRE(tomlHeaderLines(kConfig, "c.toml", h, err));
    CHECK(h == std::vector<int>{2, 5, 9, 10, 12, 17, 22});
    CHECK_FALSE(tomlHeaderLines("[a\n", "c.toml", h, err));
    CHECK(err.rfind("c.toml:1: ", 0) == 0);
}

TEST_CASE("toml: a block runs to the next header, without the comments and blanks that end it") {
    std::vector<int> h;
    std::string err;
    REQUIRE(tomlHeaderLines(kConfig, "c.toml", h, err));
    CHECK(tomlBlock(kConfig, h, 17) == std::pair<int, int>{17, 19});
    CHECK(tomlBlock(kConfig, h, 22) == std::pair<int, int>{22, 24});
    CHECK(tomlBlock(kConfig, h, 12) == std::pair<int, int>{12, 16});
    CHECK(tomlBlock(kConfig, h, 9) == std::pair<int, int>{9, 9});

    auto [f, l] = tomlBlock(kConfig, h, 17);
    std::string out = removeLines(kConfig, f, l);
    CHECK(out.find("192.0.2.10") == std::string::npos);
    CHECK(out.find("# west, added later\n[[hostname.\"www.gslb.example.com.\".service]]\naddress = "
                   "\"198.51.100.10\"") != std::string::npos);
    CHECK(out.find("  \"random\",\n]\n\n# west") != std::string::npos);
    // Everything else is byte-identical: the removed text is exactly the three lines.
    CHECK(std::string(kConfig).size() - out.size() ==
          std::string(
              "[[hostname.\"www.gslb.example.com.\".service]]\naddress = \"192.0.2.10\"\nsite = \"east\"\n")
              .size());
}

TEST_CASE("toml: line insertion and value replacement") {
    CHECK(insertAfterLine("a\nb\n", 1, "x\n") == "a\nx\nb\n");
    CHECK(insertAfterLine("a\nb", 2, "x\n") == "a\nb\nx\n");
    CHECK(insertAfterLine("a\n", 0, "x\n") == "x\na\n");
    CHECK(removeLines("1\n2\n3\n", 2, 2) == "1\n3\n");
    CHECK(tomlQuote("a\"b\\c") == "\"a\\\"b\\\\c\"");
    std::string out;
    REQUIRE(replaceZoneValue(kConfig, 0, "file", "/tmp/x y.zone", out));
    CHECK(out.find("file   =  \"/tmp/x y.zone\"   # the zone\n") != std::string::npos);
    CHECK(out.size() == std::string(kConfig).size() - std::string("gslb.example.com.zone").size() +
                            std::string("/tmp/x y.zone").size());
    CHECK_FALSE(replaceZoneValue(kConfig, 1, "file", "x", out));
}
