// The one way this project includes ldns.
//
// ldns/common.h defines `bool`, `true` and `false` as macros in C++ unless
// __bool_true_false_are_defined is set (doc/design.md "Known pitfalls of the stack"); <stdbool.h> sets it, so
// it must come first.
#pragma once
#include <stdbool.h>  // NOLINT: must precede ldns
#include <ldns/ldns.h>
