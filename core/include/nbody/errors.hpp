#pragma once
// Error types whose messages reach the user verbatim; the harness maps both to exit status 2.
#include <stdexcept>
#include <string>

namespace nbody {

// Bad command-line value, unknown variant, invalid tuning, unwritable output path...
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A problem in an input file; the message names the file, the line and the field.
class InputError : public UsageError {
public:
    using UsageError::UsageError;
};

}  // namespace nbody
