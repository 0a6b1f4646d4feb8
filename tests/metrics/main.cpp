// doctest main for the metrics unit tests (one test file per source file in metrics/).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
