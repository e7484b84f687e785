#pragma once
// What a run refuses before it starts (exit 2): constants its precision cannot hold, and an
// estimate beyond the limits.
#include <string>

#include "nbody/variant.hpp"

namespace nbody {

// Why the softening or the time step cannot be used in `precision`, "" when both can: the step adds
// eps^2 to r^2 and multiplies by dt, so a value whose square underflows to 0 or overflows to infinity
// there ends the run in a non-finite state; it is refused before the run, as 0 is. `name_prefix`
// precedes the constant's name in the message ("--" or "constants.").
std::string unrepresentable_constant(const PhysicsConstants& constants, Precision precision, const std::string& name_prefix);

// The refusal of a run whose estimate exceeds the limits: a UsageError (exit 2) that says what,
// why, and the flag that allows it.
[[noreturn]] void refuse_costly(const std::string& what, const std::string& why);

}  // namespace nbody
