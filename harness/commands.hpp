#pragma once
// The subcommands of nbody-bench (SPEC §8). Each adds itself to the app; its callback stores the
// process exit status in `exit_status` and reports bad input by throwing UsageError.
#include <CLI/CLI.hpp>

namespace nbody {

void add_list_command(CLI::App& app, int& exit_status);
void add_run_command(CLI::App& app, int& exit_status);
void add_verify_command(CLI::App& app, int& exit_status);
void add_matrix_command(CLI::App& app, int& exit_status);
void add_check_results_command(CLI::App& app, int& exit_status);

}  // namespace nbody
