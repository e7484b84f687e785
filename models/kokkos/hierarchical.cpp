// kokkos.hierarchical: Kokkos' three-level mapping. A team owns team_size bodies (TeamThreadRange,
// one per thread), and the vector lanes of each thread split the sum over j (ThreadVectorRange
// parallel_reduce of the pull components). On the GPU a thread's vector lanes are adjacent
// lanes of one warp reading adjacent j, combined by warp shuffles; on host spaces the vector
// length is 1 and the j loop is a thread's plain loop.
#include <string>

#include "kokkos_simulation.hpp"
#include "nbody/registry.hpp"

namespace nbody {
namespace kokkos {

// Launches the pull kernel; given `largest_team`, only stores there the largest team size Kokkos
// can launch it with (the check at creation).
template <class Space, class Real, int Dim>
void hierarchical_pulls(Dispatch<Space>& dispatch, DeviceAxes<Space, Real, Dim> p, DeviceReals<Space, Real> m,
                        DeviceAxes<Space, Real, Dim> pull, int n, Real eps2, int team_size, int vector_length,
                        int* largest_team = nullptr) {
    using Policy = Kokkos::TeamPolicy<Space>;
    using Member = typename Policy::member_type;
    const int teams = (n + team_size - 1) / team_size;
    const auto kernel = KOKKOS_LAMBDA(const Member& team) {
        const int first = team.league_rank() * team_size;
        const int count = n - first < team_size ? n - first : team_size;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), [&](const int k) {
            const int i = first + k;
            const Vec<Real, Dim> pi = load(p, i);
            Pull<Real, Dim> total;
            Kokkos::parallel_reduce(
                Kokkos::ThreadVectorRange(team, n),
                [&](const int j, Pull<Real, Dim>& partial) {
                    accumulate_pull(pi, load(p, j), m(j), eps2, partial, InvSqrt{});
                },
                total);
            Kokkos::single(Kokkos::PerThread(team), [&]() { store(pull, i, total); });
        });
    };
    const Policy policy(dispatch.space(), teams, team_size, vector_length);
    if (largest_team != nullptr)
        *largest_team = policy.team_size_max(kernel, Kokkos::ParallelForTag());
    else
        dispatch.parallel_for("nbody::kokkos::hierarchical", policy, kernel);
}

template <class Space, class Real, int Dim>
class Hierarchical final : public KokkosSimulation<Space, Real, Dim> {
public:
    Hierarchical(const Problem& problem, const TuningValues& tuning)
        : KokkosSimulation<Space, Real, Dim>(problem, tuning),
          team_size_(static_cast<int>(tuning_int(tuning, "team_size"))),
          vector_length_(static_cast<int>(tuning_int(tuning, "vector_length"))) {
        check_team_threads<Space>(team_size_, vector_length_);
        int largest = 0;
        pull_kernel(&largest);
        check_team_size<Space>(largest, team_size_, vector_length_, this->workload());
    }

private:
    void compute_pulls() override {
        pull_kernel();
    }

    // The launch, or the team size check (see hierarchical_pulls).
    void pull_kernel(int* largest_team = nullptr) {
        hierarchical_pulls(this->dispatch(), this->positions(), this->masses(), this->pulls(), this->n(), this->eps2(),
                           team_size_, vector_length_, largest_team);
    }

    int team_size_, vector_length_;
};

}  // namespace kokkos

void register_kokkos_hierarchical(Registry& registry) {
    // On the GPU team_size x vector_length threads form a block (at most 1024); host spaces have
    // teams of one thread and vector length 1.
    kokkos::register_for_each_space<kokkos::Hierarchical>(
        registry, "hierarchical", "TeamPolicy: bodies over TeamThreadRange, ThreadVectorRange reduction over j",
        [](bool gpu) {
            return std::vector<TuningParameter>{
                kokkos::power_of_two_tuning("team_size", "threads (bodies at a time) per team", 1, gpu ? 128 : 1,
                                            gpu ? 32 : 1),
                kokkos::power_of_two_tuning("vector_length", "vector lanes splitting each body's sum over j", 1,
                                            gpu ? 32 : 1, gpu ? 8 : 1)};
        },
        {.gpu = 0.192, .host = 0.09, .gpu_full_rate_bodies = 16384, .gpu_step_overhead_s = 5e-06},  // @openmp reached 0.048-0.35 (16 cores), 0.26 (2)
        // the GPU's vector lanes split each sum; a host team has one lane
        {.gpu = Reproducibility::order_fixed, .host = Reproducibility::bitwise});
}

}  // namespace nbody
