#pragma once
// The subcommands of nbody-bench (SPEC §8). Each adds itself to the app; its callback stores the
// process exit status in `exit_status` and reports bad input by throwing UsageError. The commands
// that run simulations run them over the ranks of `ranks` (docs/scaling.md): a single process
// unless main started them under mpirun.
#include "platform/distributed.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace nbody {

void add_list_command(CLI::App& app, int& exit_status);
void add_run_command(CLI::App& app, int& exit_status, DistributedRun& ranks = DistributedRun::single_process());
void add_compare_command(CLI::App& app, int& exit_status, DistributedRun& ranks = DistributedRun::single_process());
void add_verify_command(CLI::App& app, int& exit_status, DistributedRun& ranks = DistributedRun::single_process());
void add_matrix_command(CLI::App& app, int& exit_status, DistributedRun& ranks = DistributedRun::single_process());
void add_check_results_command(CLI::App& app, int& exit_status);

}  // namespace nbody
