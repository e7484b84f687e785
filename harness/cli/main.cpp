// nbody-bench: list, run, verify and benchmark the variants of this build.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "io/io.hpp"
#include "nbody/errors.hpp"
#include "platform/distributed.hpp"

int main(int argc, char** argv) {
    // Under mpirun every rank runs this same command line (docs/scaling.md).
    std::unique_ptr<nbody::DistributedRun> ranks;
    try {
        ranks = std::make_unique<nbody::DistributedRun>(argc, argv);
    } catch (const nbody::UsageError& e) {
        std::fprintf(stderr, "nbody-bench: %s\n", nbody::one_line(e.what()).c_str());
        return 2;
    }
    // Before any other collective: ranks given other options would wait in different collectives.
    ranks->require_same_command_line(argc, argv);
    // Rank 0 alone prints results; the other ranks' stdout would repeat it. Their stderr stays:
    // a failure there is reported by the rank that saw it.
    if (!ranks->writes_output() && std::freopen("/dev/null", "w", stdout) == nullptr) {
        std::fprintf(stderr, "nbody-bench: rank %d could not silence its stdout\n", ranks->communicator().rank());
        return 1;
    }
    // A failure on one rank ends every rank (DistributedRun::fail): its peers may be waiting in a
    // collective for it. In a single process: the message and the status.
    const auto failed = [&](int exit_status, const std::string& message) {
        // One line whatever a message quotes (a path or an argument with a newline or an escape).
        const std::string shown = nbody::one_line(message);
        if (ranks->distributed()) ranks->fail(exit_status, "nbody-bench: " + shown);
        std::fprintf(stderr, "nbody-bench: %s\n", shown.c_str());
        return exit_status;
    };

    CLI::App app{"nbody-bench: the N-body + activity-map benchmark suite (2D/3D, fp32/fp64, Euler/leapfrog; CUDA, Kokkos, OpenMP, serial)"};
    app.require_subcommand(1);
    int exit_status = 0;
    nbody::add_list_command(app, exit_status);
    nbody::add_run_command(app, exit_status, *ranks);
    nbody::add_compare_command(app, exit_status, *ranks);
    nbody::add_verify_command(app, exit_status, *ranks);
    nbody::add_matrix_command(app, exit_status, *ranks);
    nbody::add_check_results_command(app, exit_status);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help
        // A first word that is no subcommand: CLI11 would only say that one is required.
        if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-') {
            std::string names;
            for (const CLI::App* command : app.get_subcommands([](CLI::App*) { return true; }))
                names += (names.empty() ? "" : ", ") + command->get_name();
            return failed(2, "unknown subcommand " + nbody::quoted_excerpt(argv[1]) + " (the subcommands: " + names + "; see --help)");
        }
        return failed(2, std::string(e.what()) + " (see --help)");
    } catch (const nbody::UsageError& e) {
        return failed(2, e.what());
    } catch (const std::exception& e) {
        return failed(1, std::string("failed: ") + e.what());
    }
    return exit_status;
}
