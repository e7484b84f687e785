// nbody-bench: list, run, verify and benchmark the variants of this build.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#include "commands.hpp"
#include "nbody/errors.hpp"

int main(int argc, char** argv) {
    CLI::App app{"nbody-bench: the N-body + activity-map benchmark suite (2D/3D, fp32/fp64, Euler/leapfrog; CUDA, Kokkos, OpenMP, serial)"};
    app.require_subcommand(1);
    int exit_status = 0;
    nbody::add_list_command(app, exit_status);
    nbody::add_run_command(app, exit_status);
    nbody::add_verify_command(app, exit_status);
    nbody::add_matrix_command(app, exit_status);
    nbody::add_check_results_command(app, exit_status);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
        std::fprintf(stderr, "nbody-bench: %s (see --help)\n", e.what());
        return 2;
    } catch (const nbody::UsageError& e) {
        std::fprintf(stderr, "nbody-bench: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "nbody-bench: failed: %s\n", e.what());
        return 1;
    }
    return exit_status;
}
